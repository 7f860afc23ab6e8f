/**
 * A turn a process left waiting on an approval (ADR 0027): the log ends
 * inside a step whose answer is logged whole, and every call of it without a
 * result was never dispatched — at least one of them asked, answered or not.
 * Nothing of that step ran, so nothing is lost by going on with it: resume
 * keeps the turn open (repair does not cancel the calls), and the session
 * continues it from its calls — each is decided again, a pending question
 * asked again, and a question the log holds the answer of is not asked again:
 * that answer is used (ADR 0031; a crash between an answer and its dispatch,
 * or a fork that answered anew, ADR 0029). A call runs only on an allow, once.
 */
import type { Block, Finish, Origin } from './entry-values.js';
import type { Entry, EntryOf } from './entries.js';
import { stepNumber } from './ids.js';
import { verifyLog } from './verify.js';
import type { OpenCall } from './verdict.js';

/** An approval answer as the log holds it: outcome, who gave it, and the rule of an "always". */
export type LoggedAnswer = NonNullable<OpenCall['answer']>;

export interface ResumableTurn {
  /** 0-based index of the turn's `turn/start`: the session's state before it is what resume restores. */
  at: number;
  turn: string;
  /** The `session/input` it was started by, its text, who sent it. */
  from?: number;
  input: string;
  origin?: Origin;
  /** The open step and its number in the turn (t3.s2 → 2). */
  step: string;
  steps: number;
  /** The step's answer as logged: its blocks give the calls, in order. */
  blocks: Block[];
  finish: Finish;
  /** Calls of the step that have their result already. */
  settled: string[];
  /** Calls asked and never answered: asked again. */
  pending: string[];
  /** Calls asked and answered, not dispatched: the logged answer stands in for the question (ADR 0031). */
  decided: { callId: string; answer: LoggedAnswer }[];
  /**
   * The turn stopped on a spent budget's question, between steps (ADR 0047): no step is open (`step` is '', the
   * step's lists empty, `steps` the steps it ran), and it goes on by asking that question again.
   */
  budget?: true;
}

/** Contract: pure; the open turn when the log ends as described above, else undefined (repair closes it the ordinary way). */
export function resumableTurn(entries: readonly Entry[]): ResumableTurn | undefined {
  const verdict = verifyLog(entries, { allowOpenTail: true });
  const open = verdict.open;
  if (!verdict.ok || !open?.turn || open.compaction || open.subagents.length > 0 || open.unloggedCalls.length > 0) return undefined;
  if (!open.step) return open.turn.budgetAsked ? budgetWait(entries, open.turn) : undefined;
  // Anything dispatched may have run (I5: its outcome is unknown, never re-run): such a step is closed as before.
  if (open.calls.length === 0 || open.calls.some((c) => c.dispatched) || !open.calls.some((c) => c.awaitingApproval || c.answer)) return undefined;
  // A question cancelled by a cancel of the turn: the person stopped the turn, so it is closed, not gone on with.
  if (open.calls.some((c) => c.answer?.outcome === 'cancelled')) return undefined;
  const at = entries.findIndex((e) => e.kind === 'turn/start' && e.turn === open.turn!.id && e.seq === open.turn!.seq);
  const answer = entries.find((e): e is EntryOf<'assistant/message'> => e.kind === 'assistant/message' && e.step === open.step!.id);
  if (at < 0 || !answer || answer.finish.kind !== 'ok') return undefined;
  const openIds = new Set(open.calls.map((c) => c.callId));
  const settled = entries.filter((e): e is EntryOf<'tool/call'> => e.kind === 'tool/call' && e.step === open.step!.id && !openIds.has(e.callId)).map((e) => e.callId);
  return {
    ...turnHeader(entries, at),
    step: open.step.id,
    steps: stepNumber(open.step.id),
    blocks: answer.blocks,
    finish: answer.finish,
    settled,
    pending: open.calls.filter((c) => c.awaitingApproval).map((c) => c.callId),
    decided: open.calls.flatMap((c) => (c.answer ? [{ callId: c.callId, answer: c.answer }] : [])),
  };
}

/** What a resumable turn says of its start: the `turn/start` at `at`, its input, and who gave it. */
function turnHeader(entries: readonly Entry[], at: number): Pick<ResumableTurn, 'at' | 'turn' | 'from' | 'input' | 'origin'> {
  const start = entries[at] as EntryOf<'turn/start'>;
  const first = entries.slice(at).find((e): e is EntryOf<'user/message'> => e.kind === 'user/message' && e.turn === start.turn);
  return {
    at,
    turn: start.turn,
    ...(start.from !== undefined ? { from: start.from } : {}),
    input: start.input,
    ...(first && first.origin !== 'user' ? { origin: first.origin } : {}),
  };
}

/** A turn waiting on its budget question: nothing of the call it gates was made, so it is asked again (ADR 0047). */
function budgetWait(entries: readonly Entry[], turn: { id: string; seq: number; steps: number }): ResumableTurn | undefined {
  const at = entries.findIndex((e) => e.kind === 'turn/start' && e.turn === turn.id && e.seq === turn.seq);
  if (at < 0) return undefined;
  return {
    ...turnHeader(entries, at),
    step: '',
    steps: turn.steps,
    blocks: [],
    finish: { kind: 'ok', reason: 'stop' },
    settled: [],
    pending: [],
    decided: [],
    budget: true,
  };
}
