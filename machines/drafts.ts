/**
 * Pure builders of log drafts from machine context. Machines name what to
 * record; the recorder stamps seq and time.
 */
import { draftToolResult } from '../log/draft-tool-result.js';
import { LogNotDurableError } from '../log/errors.js';
import { draftNotDurable } from '../log/not-durable.js';
import type { ApprovalOutcome, ApprovalRule } from '../log/entries-calls.js';
import type { Block, Finish, StepEndReason, ToolResultStatus, TurnEndReason, Usage } from '../log/entry-values.js';
import type { DraftOf } from '../log/entries.js';

export interface StepRef {
  turn: string;
  step: string;
}
export interface CallRef extends StepRef {
  callId: string;
  toolCallId: string;
  name: string;
}

/** `from`: the `session/input` the turn was started by. */
export const draftTurnStart = (turn: string, input: string, from?: number): DraftOf<'turn/start'> =>
  from !== undefined ? { kind: 'turn/start', turn, input, from } : { kind: 'turn/start', turn, input };

/** `from`: the `session/input` a steer or inject delivers. */
export const draftUserMessage = (turn: string, text: string, origin: DraftOf<'user/message'>['origin'], from?: number): DraftOf<'user/message'> =>
  from !== undefined ? { kind: 'user/message', turn, text, origin, from, surfaceOp: 'append' } : { kind: 'user/message', turn, text, origin, surfaceOp: 'append' };

export const draftStepStart = (r: StepRef): DraftOf<'step/start'> => ({ kind: 'step/start', turn: r.turn, step: r.step });

/** What the stream measured besides its blocks: the provider's usage, and the time to its first chunk (ADR 0079). */
export interface Measured {
  usage?: Usage | undefined;
  firstChunkMs?: number | undefined;
}

export const draftAssistant = (r: StepRef, blocks: Block[], finish: Finish, measured: Measured = {}, interrupted?: boolean): DraftOf<'assistant/message'> => ({
  kind: 'assistant/message',
  turn: r.turn,
  step: r.step,
  blocks,
  ...(measured.usage ? { usage: measured.usage } : {}),
  ...(measured.firstChunkMs !== undefined ? { firstChunkMs: measured.firstChunkMs } : {}),
  finish,
  ...(interrupted ? { interrupted: true as const } : {}),
  surfaceOp: 'append',
});

export const draftRetry = (r: StepRef, attempt: number, code: DraftOf<'model/retry'>['code'], message: string, delayMs: number): DraftOf<'model/retry'> => ({
  kind: 'model/retry',
  turn: r.turn,
  step: r.step,
  attempt,
  code,
  message,
  delayMs,
});

export const draftToolCall = (c: CallRef, args: string): DraftOf<'tool/call'> => ({
  kind: 'tool/call',
  turn: c.turn,
  step: c.step,
  callId: c.callId,
  toolCallId: c.toolCallId,
  name: c.name,
  arguments: args,
});

export const draftApprovalAsked = (c: CallRef, reason: string): DraftOf<'approval/asked'> => ({
  kind: 'approval/asked',
  turn: c.turn,
  step: c.step,
  callId: c.callId,
  name: c.name,
  reason,
});

export const draftApprovalDecided = (c: CallRef, outcome: ApprovalOutcome, by: string, rule?: ApprovalRule): DraftOf<'approval/decided'> => {
  const d: DraftOf<'approval/decided'> = { kind: 'approval/decided', turn: c.turn, step: c.step, callId: c.callId, outcome, by };
  if (rule !== undefined) d.rule = rule;
  return d;
};

export const draftDispatch = (c: CallRef, idempotent: boolean): DraftOf<'tool/dispatch'> => ({
  kind: 'tool/dispatch',
  turn: c.turn,
  step: c.step,
  callId: c.callId,
  name: c.name,
  idempotent,
});

/** A call's result; see `log/draft-tool-result.ts` for the verdicts it carries. */
export const draftResult = (c: CallRef, status: ToolResultStatus, content: string, code?: string, reason?: string): DraftOf<'tool/result'> => draftToolResult(c, status, content, code, reason);

export const draftStepEnd = (r: StepRef, reason: StepEndReason): DraftOf<'step/end'> => ({ kind: 'step/end', turn: r.turn, step: r.step, reason });

export const draftTurnEnd = (turn: string, reason: TurnEndReason, steps: number, extra: { cause?: string; code?: string } = {}): DraftOf<'turn/end'> => {
  const d: DraftOf<'turn/end'> = { kind: 'turn/end', turn, reason, steps };
  if (extra.cause !== undefined) d.cause = extra.cause;
  if (extra.code !== undefined) d.code = extra.code;
  return d;
};

/**
 * The note a machine records, in the same transition that reacts to its failed flush (so nothing lands between
 * the two, live or in replay): what the flush was to cover, and the store's error (ADR 0017). None for a failure
 * that is not the log's (an actor that was not provided).
 */
export const draftUnsaved = (error: unknown): DraftOf<'log/not-durable'> | undefined => (error instanceof LogNotDurableError ? draftNotDurable(error) : undefined);
