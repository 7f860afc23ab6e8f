/**
 * The approval seam's port: the policy a session runs under (`never`, `ask`,
 * `auto`, plus allow rules), the verdicts, and the answerer that `ask` goes
 * to (a terminal, WebSocket clients, an ACP client). The policy provider is
 * the `approval` row; the answerer is the host's.
 */
import type { ApprovalOutcome, ApprovalRule } from '../log/entries-calls.js';
import type { QuestionField, QuestionValue } from './tools.js';

/** The pre-execute verdict: guards can only deny; `ask` goes to the approval seam. */
export type Decision = { kind: 'allow' } | { kind: 'deny'; reason: string } | { kind: 'ask'; reason: string };

export interface ApprovalAnswer {
  outcome: ApprovalOutcome;
  by: string;
  /** With `allowed-always`: the session-scoped rule the answer adds; logged with the decision. */
  rule?: ApprovalRule;
  /** To a question with a form (`AnswerRequest.form`): the values filled in; a yes without them takes the fields' defaults. */
  values?: Record<string, QuestionValue>;
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
  /**
   * A tool's question (name `question`, ADR 0065): the form to fill, flat primitive fields; an answerer that
   * cannot fill forms answers yes or no, and a yes takes the defaults (a required field without one declines).
   */
  form?: { fields: readonly QuestionField[] };
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
