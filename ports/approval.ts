/**
 * The approval seam's port: the policy a session runs under (`never`, `ask`,
 * `auto`, plus allow rules), the verdicts, and the answerer that `ask` goes
 * to (a terminal, WebSocket clients, an ACP client). The policy provider is
 * the `approval` row; the answerer is the host's.
 */
import type { ApprovalOutcome, ApprovalRule } from '../log/entries.js';

/** The pre-execute verdict: guards can only deny; `ask` goes to the approval seam. */
export type Decision = { kind: 'allow' } | { kind: 'deny'; reason: string } | { kind: 'ask'; reason: string };

export interface ApprovalAnswer {
  outcome: ApprovalOutcome;
  by: string;
  /** With `allowed-always`: the session-scoped rule the answer adds; logged with the decision. */
  rule?: ApprovalRule;
}

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

/** The `approval` service: what the policy row says. */
export interface ApprovalService {
  readonly policy: ApprovalPolicy;
  /** Allow rules from flags or config; "always" answers add more at run time, logged. */
  readonly rules: readonly ApprovalRule[];
  /** An answerer that has not answered by then denies (`unavailable`). */
  readonly answerTimeoutMs?: number;
}
