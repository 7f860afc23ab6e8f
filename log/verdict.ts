/**
 * What verifying a session log answers (`verifyLog`, `verifyFile`): whether
 * it is clean, each problem by a stable name, the totals, and what a crash
 * left open at its end for repair to close.
 */
import type { Entry, EntryOf } from './entries.js';
import type { TurnEndReason } from './entry-values.js';

/**
 * One problem. `violation` is a stable name: `missing-session-start`,
 * `seq-gap`, `seq-reorder`, `bad-turn-id`, `bad-step-id`, `missing-turn-end`,
 * `missing-step-end`, `step-outside-turn`, `turn-step-count`, `duplicate-call`,
 * `missing-call`, `orphan-result`, `duplicate-result`, `missing-result`,
 * `forged-entry`, `unmatched-compaction`, `bad-replace`,
 * `misplaced-checkpoint`, `checkpoint-mismatch`, `open-turn`, `bad-input-link` — and, from
 * reading the file, `bad-json`, `bad-utf8`, `bad-line-end`, `line-too-long`,
 * `bad-entry`, `unknown-kind`, `torn-tail`.
 */
export interface Violation {
  violation: string;
  seq: number | null;
  message: string;
  /** The file line, when the problem is in the bytes rather than an entry. */
  line?: number;
}

export interface Totals {
  entries: number;
  turns: number;
  turnEnds: Partial<Record<TurnEndReason, number>>;
  steps: number;
  /** Calls by the status of their result; `pending` for calls with none. */
  calls: Record<string, number>;
  retries: number;
  repairs: number;
  checkpoints: number;
}

export interface OpenCall {
  turn: string;
  step: string;
  callId: string;
  toolCallId: string;
  name: string;
  dispatched: boolean;
  idempotent: boolean;
  /** Asked for approval and never answered. */
  awaitingApproval: boolean;
  /** Asked and answered, not dispatched yet: an allow that waited for an earlier call, or an answer whose dispatch or denied result a crash cut off (a fork's new answer ends its log so). */
  answered?: boolean;
  /** With `answered`: the logged answer, which a process going on with the log uses instead of asking again (ADR 0031). */
  answer?: { outcome: EntryOf<'approval/decided'>['outcome']; by: string; rule?: EntryOf<'approval/decided'>['rule'] };
}

/** What the end of the log leaves open (a crash, or a process that exited at once). */
export interface OpenTail {
  /** `budgetAsked`: the turn stopped on a spent budget's question, unanswered (ADR 0047). */
  turn?: { id: string; seq: number; steps: number; budgetAsked?: boolean };
  step?: { id: string; turn: string; seq: number };
  /** Tool-call blocks of the open step's answer with no `tool/call` entry yet, in order. */
  unloggedCalls: { turn: string; step: string; callId: string; toolCallId: string; name: string; arguments: string }[];
  /** Calls of the open step with no result, in call order. */
  calls: OpenCall[];
  subagents: { callId: string; child: string }[];
  compaction?: { seq: number; estimatedTokens: number };
}

export interface Verdict {
  ok: boolean;
  violations: Violation[];
  totals: Totals;
  /** Set when `allowOpenTail` and the log ends with something open. */
  open?: OpenTail;
}

export interface VerifyOptions {
  allowOpenTail?: boolean;
  /** Checks checkpoints against a replay of the session machine (injected: the fold lives with the machines). */
  checkpoints?: (entries: readonly Entry[]) => Violation[];
}
