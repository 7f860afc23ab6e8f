/**
 * The approval seam's policy: read-only tools need no approval, nor does a
 * delegation (its class is its own: the child runs under `never`); a call an
 * allow rule matches needs none either; otherwise `auto` allows, `never`
 * denies without asking anyone, and `ask` goes to the answerer.
 */
import type { ApprovalRule } from '../log/entries.js';
import type { ApprovalPolicy, Decision } from '../ports/approval.js';
import { ruleMatches } from './approval-rules.js';

/** Contract: pure. */
export function decideByPolicy(
  policy: ApprovalPolicy,
  call: { name: string; readOnly: boolean; rendered: string; delegates?: boolean; writeReason?: string },
  rules: readonly ApprovalRule[] = [],
): Decision {
  if (call.readOnly) return { kind: 'allow' };
  // Delegation writes nothing itself; what the child does is decided by the child's own policy, `never` (I10).
  if (call.delegates) return { kind: 'allow' };
  if (rules.some((r) => ruleMatches(r, call))) return { kind: 'allow' };
  if (policy === 'auto') return { kind: 'allow' };
  const why = call.writeReason ?? `${call.name} changes the workspace or runs commands`;
  if (policy === 'never') return { kind: 'deny', reason: `approval policy "never": ${why}` };
  return { kind: 'ask', reason: why };
}
