/**
 * The approval seam's policy: read-only tools need no approval; a call an
 * allow rule matches needs none either; otherwise `auto` allows, `never`
 * denies without asking anyone, and `ask` goes to the answerer.
 */
import type { ApprovalRule } from '../log/entries.js';
import type { ApprovalAnswer, Decision } from '../machines/tool-call.machine.js';
import { ruleMatches } from './approval-rules.js';

export type ApprovalPolicy = 'never' | 'ask' | 'auto';

export interface AnswerRequest {
  callId: string;
  name: string;
  /** The raw arguments text. */
  arguments: string;
  reason: string;
  /** The call as the tool's presenter renders it for people. */
  presented: string;
  /** The rule an `allowed-always` answer adds unless the answer names its own. */
  always: ApprovalRule;
  signal: AbortSignal;
}

/**
 * A person or program that answers approval requests.
 * Contract: may reject, throw, hang or answer outside the closed outcome set;
 * each of these denies (`unavailable`), and a hang ends at the answer timeout.
 */
export type Answerer = (request: AnswerRequest) => Promise<ApprovalAnswer>;

/** Contract: pure. */
export function decideByPolicy(
  policy: ApprovalPolicy,
  call: { name: string; readOnly: boolean; rendered: string },
  rules: readonly ApprovalRule[] = [],
): Decision {
  if (call.readOnly) return { kind: 'allow' };
  if (rules.some((r) => ruleMatches(r, call))) return { kind: 'allow' };
  if (policy === 'auto') return { kind: 'allow' };
  if (policy === 'never') return { kind: 'deny', reason: `approval policy "never": ${call.name} changes the workspace or runs commands` };
  return { kind: 'ask', reason: `${call.name} changes the workspace or runs commands` };
}
