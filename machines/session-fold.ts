/**
 * Replay of the session machine as a pure fold over the log: the log's turn
 * boundaries become the session-level events, run through xstate's
 * `initialTransition`/`transition` (no actions run, no actors start). It is
 * how resume restores a session (newest checkpoint, then the tail) and how a
 * checkpoint is checked (it must equal the fold up to it).
 *
 * Only the durable part of the session is compared and restored: the turn
 * count and the last turn's outcome. The inbox (queued followups, injects,
 * a turn's unused steer) is input nobody admitted yet; it is not in the log,
 * so it is not restored (ADR 0002).
 */
import { createActor, fromPromise, initialTransition, type AnyActorScope, type SnapshotFrom } from 'xstate';
import { z } from 'zod';
import { TurnEndCode } from '../log/codes.js';
import type { Entry } from '../log/entries.js';
import { resumableTurn } from '../log/resumable.js';
import { isSaveFailureCode, LogNotDurableError } from '../log/errors.js';
import type { Violation } from '../log/verdict.js';
import { sessionMachine, type SessionContext, type SessionEvent, type SessionInput } from './session.machine.js';
import type { TurnOutput } from './turn.machine.js';

type SessionSnapshot = SnapshotFrom<typeof sessionMachine>;
/** A session event, or the done event of its invoked turn. */
export type SessionLogEvent = SessionEvent | { type: 'xstate.done.actor.turn'; actorId: 'turn'; output: TurnOutput };

/** Contract: pure; the events that drive the session machine through the turns the log holds, in order. */
export function sessionEventsFromLog(entries: readonly Entry[]): SessionLogEvent[] {
  const out: SessionLogEvent[] = [];
  entries.forEach((e, i) => {
    const ev = eventOf(e, entries, i);
    if (ev) out.push(ev);
  });
  return out;
}

/**
 * The note that a `turn/end`'s own flush failed: it follows the end before the checkpoint, with only input that
 * arrived while the end was being saved between them (ADR 0021).
 */
function noteFor(entries: readonly Entry[], i: number): Entry | undefined {
  const end = entries[i]!;
  for (let j = i + 1; j < entries.length; j++) {
    const e = entries[j]!;
    if (e.kind === 'log/not-durable' && e.upTo === end.seq) return e;
    if (e.kind === 'checkpoint' || e.kind === 'turn/start') return undefined;
  }
  return undefined;
}

/** The session-level event entry `i` stands for, if any. */
function eventOf(e: Entry, entries: readonly Entry[], i: number): SessionLogEvent | undefined {
  if (e.kind === 'turn/start') return { type: 'session.input.received', seq: e.from ?? 0, text: e.input, mode: 'followup' };
  if (e.kind === 'turn/end') return { type: 'xstate.done.actor.turn', actorId: 'turn', output: turnOutput(e, noteFor(entries, i)) };
  return undefined;
}

function turnOutput(e: Extract<Entry, { kind: 'turn/end' }>, next: Entry | undefined): TurnOutput {
  const o: TurnOutput = { turn: e.turn, reason: e.reason, steps: e.steps, leftoverSteer: [], leftoverInject: [] };
  // A turn whose end could not be saved reported LOG_NOT_DURABLE, whatever the unsaved entry says (ADR 0017);
  // one that ended on a save failure already keeps its own code and cause.
  if (next?.kind === 'log/not-durable' && next.upTo === e.seq && !isSaveFailureCode(e.code)) {
    return { ...o, reason: 'error', cause: new LogNotDurableError(next.upTo, next.detail, next.sysCode).message, code: TurnEndCode.LOG_NOT_DURABLE };
  }
  if (e.cause !== undefined) o.cause = e.cause;
  if (e.code !== undefined) o.code = e.code;
  return o;
}

/**
 * The same machine with an inert turn: a pure transition never starts the
 * child it invokes, but creating a full turn-machine actor ref for each
 * turn would double the cost of the fold.
 */
const foldable = sessionMachine.provide({ actors: { turn: fromPromise(async () => undefined) as never } });

/**
 * One inert scope for a whole fold. xstate's `transition()` builds a fresh
 * actor for every call, which dominates a long log; this is the same call on
 * the machine's own `transition` with a scope that runs nothing (actions and
 * deferred work are dropped), so the fold stays pure.
 */
function inertScope(): AnyActorScope {
  const self = createActor(foldable, { input: {} });
  const drop = () => {};
  return { self, id: '', sessionId: '', logger: drop, defer: drop, emit: drop, system: self.system, stopChild: drop, actionExecutor: drop };
}

const fold = (s: SessionSnapshot, events: readonly SessionLogEvent[], scope = inertScope()): SessionSnapshot => {
  for (const ev of events) s = foldable.transition(s, ev as SessionEvent, scope);
  return s;
};

/** Contract: pure; the session's snapshot after the whole log, from the machine's initial state. */
export function foldSession(entries: readonly Entry[], input: SessionInput = {}): SessionSnapshot {
  const [s0] = initialTransition(foldable, input);
  return fold(s0, sessionEventsFromLog(entries));
}

/** What a checkpoint must agree with the fold on. */
export interface DurableSession {
  value: unknown;
  turns: number;
  last?: Pick<TurnOutput, 'turn' | 'reason' | 'steps' | 'cause' | 'code'>;
}

const Last = z.object({
  turn: z.string(),
  reason: z.string(),
  steps: z.number(),
  cause: z.string().optional(),
  code: z.string().optional(),
});
/** The persisted session snapshot bridle writes at turn boundaries; a checkpoint that fails this (an older machine's) is not restored. */
const PersistedIdle = z.object({
  status: z.literal('active'),
  value: z.literal('idle'),
  context: z.object({ turns: z.int().nonnegative(), last: Last.optional() }),
});

export function durableView(snapshot: { value: unknown; context: Pick<SessionContext, 'turns' | 'last'> }): DurableSession {
  const d: DurableSession = { value: snapshot.value, turns: snapshot.context.turns };
  const l = snapshot.context.last;
  if (l) {
    d.last = { turn: l.turn, reason: l.reason, steps: l.steps };
    if (l.cause !== undefined) d.last.cause = l.cause;
    if (l.code !== undefined) d.last.code = l.code;
  }
  return d;
}

/** Contract: pure; one `checkpoint-mismatch` per checkpoint that differs from the fold of the log up to it. */
export function checkCheckpoints(entries: readonly Entry[]): Violation[] {
  const out: Violation[] = [];
  let [s] = initialTransition(foldable, {});
  const scope = inertScope();
  for (const [i, e] of entries.entries()) {
    const ev = eventOf(e, entries, i);
    if (ev) s = foldable.transition(s, ev as SessionEvent, scope);
    if (e.kind !== 'checkpoint') continue;
    const want = JSON.stringify(durableView(s));
    const parsed = PersistedIdle.safeParse(e.snapshot);
    const got = parsed.success ? JSON.stringify(durableView(parsed.data as never)) : undefined;
    if (got !== want) out.push({ violation: 'checkpoint-mismatch', seq: e.seq, message: `checkpoint for ${e.turn} ${got ? `holds ${got}` : 'is not a session snapshot this version can read'}; replaying the log gives ${want}` });
  }
  return out;
}

/**
 * The persisted snapshot a resumed session starts from: the newest
 * checkpoint this version can read, its inbox emptied and its settings taken
 * from `input`, then the log's tail folded on top; with no usable checkpoint,
 * the fold of the whole log.
 * Contract: pure; equals `foldSession(entries, input)` on the durable view
 * for any log whose checkpoints verify; throws only if the log ends mid-turn
 * (repair it first), unless that turn waits on an approval (`resumableTurn`):
 * then the snapshot is the session's just before that turn began.
 */
export function restoreSessionSnapshot(all: readonly Entry[], input: SessionInput = {}) {
  // A turn left waiting on an approval is gone on with (ADR 0027): the session is restored to just before it.
  const resumable = resumableTurn(all);
  const entries = resumable ? all.slice(0, resumable.at) : all;
  let s: SessionSnapshot | undefined;
  let from = 0;
  for (let i = entries.length - 1; i >= 0 && !s; i--) {
    const e = entries[i]!;
    if (e.kind !== 'checkpoint') continue;
    const p = PersistedIdle.safeParse(e.snapshot);
    if (!p.success) continue;
    const [base] = initialTransition(foldable, { ...input, turns: p.data.context.turns });
    const last = p.data.context.last;
    const context: SessionContext = { ...base.context, ...(last ? { last: { ...(last as TurnOutput), leftoverSteer: [], leftoverInject: [] } } : {}) };
    s = foldable.resolveState({ value: 'idle', context });
    from = i + 1;
  }
  s = fold(s ?? initialTransition(foldable, input)[0], sessionEventsFromLog(entries.slice(from)));
  if (s.value !== 'idle') throw new Error(`restoreSessionSnapshot: the log ends inside a turn (${JSON.stringify(s.value)}); repair it first`);
  return sessionMachine.getPersistedSnapshot(s);
}
