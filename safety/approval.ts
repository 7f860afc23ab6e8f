/**
 * The approval seam's policy: read-only tools need no approval, nor does a
 * delegation (its class is its own: the child runs under `never`); a call an
 * allow rule matches needs none either; otherwise `auto` allows, `ask` goes to
 * the answerer, and `never` asks nobody: it runs what the session's
 * confinement holds and refuses the rest by name (`decideUnderNever`, ADR 0052).
 */
import type { ApprovalRule } from '../log/entries-calls.js';
import type { ApprovalPolicy, Decision } from '../ports/approval.js';
import type { ToolConfinement } from '../ports/tools.js';
import { ruleMatches } from './approval-rules.js';
import { decideUnderNever, type SessionConfinement } from './never.js';

/** Contract: pure. Under `never` without `confinement`, every call that writes is refused (`NO_CONFINEMENT`). */
export function decideByPolicy(
  policy: ApprovalPolicy,
  call: { name: string; readOnly: boolean; rendered: string; delegates?: boolean; writeReason?: string; confinement?: ToolConfinement },
  rules: readonly ApprovalRule[] = [],
  confinement?: SessionConfinement,
): Decision {
  if (call.readOnly) return { kind: 'allow' };
  // Delegation writes nothing itself; what the child does is decided by the child's own policy, `never` (I10).
  if (call.delegates) return { kind: 'allow' };
  if (rules.some((r) => ruleMatches(r, call))) return { kind: 'allow' };
  if (policy === 'auto') return { kind: 'allow' };
  if (policy === 'never') return decideUnderNever(call, confinement);
  return { kind: 'ask', reason: call.writeReason ?? `${call.name} changes the workspace or runs commands` };
}
