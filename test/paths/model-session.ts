/**
 * Path model of `session`. The turn and compaction children are played by
 * the path; a turn's done events say how it ended and what queued input it
 * handed back.
 * Invariants: every admitted followup runs exactly once — it is claimed by
 * one turn or still queued, never lost, never doubled, whatever cancels and
 * turn endings come between; a turn starts only with input to claim; inject
 * context is neither lost nor doubled; a cancel reaches the running turn
 * or manual compaction; the wake latch — a session that is
 * idle with queued input starts exactly that input's turn when woken; a
 * turn names the logged input it takes (`from`, ADR 0021).
 */
import type { AnyEventObject, AnyMachineSnapshot } from 'xstate';
import { childAt, type PathModel, type PathRun } from './path-model.js';

/** Each payload's input as the host logged it: the seq of its `session/input` (ADR 0021). */
const SEQ: Record<string, number> = { f: 11, s: 12, i: 13, 'resume note': 14, 'late steer': 15, 'late inject': 16, 'waiting turn': 17 };
/** A turn a process left waiting on an approval (ADR 0027): the host hands it back first, to go on with. */
const RESUME = { steps: 2, step: { blocks: [{ type: 'tool-call', id: 'call_a', name: 'write', arguments: '{}' }], finish: { kind: 'ok', reason: 'tool-calls' }, settled: [] } };

const TURN_OUTPUTS = [
  { turn: 't1', reason: 'completed', steps: 1, leftoverSteer: [], leftoverInject: [] },
  { turn: 't1', reason: 'aborted', steps: 1, cause: 'user', leftoverSteer: [{ seq: SEQ['late steer'], text: 'late steer' }], leftoverInject: [{ seq: SEQ['late inject'], text: 'late inject' }] },
];

const bucket = (n: number) => Math.min(n, 2);

function abstract(s: AnyMachineSnapshot) {
  const c = s.context;
  return { followups: bucket(c.followups.length), injects: bucket(c.injects.length), claimed: c.claimed !== undefined, compactPending: c.compactPending ?? null };
}

/** A queued input: `{ seq, text, origin? }`. */
const textOf = (f: unknown): string => (f as { text: string }).text;

const tally = (into: Map<string, number>, items: readonly unknown[], sign: 1 | -1) => {
  for (const t of items.map(textOf)) into.set(t, (into.get(t) ?? 0) + sign);
};

function check(run: PathRun): string[] {
  const problems: string[] = [];
  const turns = run.children.filter((c) => c.src === 'turn');
  const claims = turns.map((c) => c.input as { turn: string; input: string; from?: number; injected: { seq: number; text: string }[]; origin?: string });
  // Conservation: what was admitted (or handed back by a turn) is claimed once or still waits.
  const followups = new Map<string, number>();
  const injects = new Map<string, number>();
  let toRunningTurn = 0;
  run.sent.forEach((e, i) => {
    if (e.type === 'xstate.done.actor.turn' || e.type === 'xstate.done.actor.closeFaultedTurn') {
      tally(followups, e.output.leftoverSteer, 1);
      tally(injects, e.output.leftoverInject, 1);
    }
    // The turn handed back is input admitted once: it is claimed by the turn that goes on with it.
    if (e.type === 'session.turn.resumed') return void tally(followups, [e], 1);
    if (e.type !== 'session.input.received') return;
    const active = run.before[i]!.matches({ running: 'active' });
    if (active && e.mode !== 'followup') toRunningTurn++;
    else tally(e.mode === 'inject' ? injects : followups, [e], 1);
  });
  for (const t of claims) {
    tally(followups, [{ text: t.input }], -1);
    tally(injects, t.injected, -1);
  }
  tally(followups, run.final.context.followups, -1);
  tally(injects, run.final.context.injects, -1);
  for (const [text, n] of followups) if (n !== 0) problems.push(`followup ${JSON.stringify(text)}: ${n > 0 ? 'lost' : 'run twice'} (${n})`);
  for (const [text, n] of injects) if (n !== 0) problems.push(`inject ${JSON.stringify(text)}: ${n > 0 ? 'lost' : 'doubled'} (${n})`);
  const reached = turns.flatMap((c) => c.received).filter((r) => r.event.type === 'turn.input.steered' || r.event.type === 'turn.input.injected').length;
  if (reached !== toRunningTurn) problems.push(`${toRunningTurn} steer/inject inputs sent to a running turn, ${reached} reached it`);
  // A cancel reaches what runs: the turn (once; the session is then cancelling) or a manual compaction.
  run.sent.forEach((e, i) => {
    if (e.type !== 'session.cancel.requested') return;
    const before = run.before[i]!;
    const target = before.matches({ running: 'active' }) ? 'turn' : before.matches('compacting') ? 'compaction' : undefined;
    if (!target) return;
    const child = childAt(run, target, i + 1);
    if (!child?.received.some((r) => r.at === i + 1 && r.event.type === `${target}.cancel.requested`)) problems.push(`a cancel never reached the running ${target}`);
  });
  const forwarded = turns.flatMap((c) => c.received).filter((r) => r.event.type === 'turn.cancel.requested').length;
  const cancels = run.sent.filter((e, i) => e.type === 'session.cancel.requested' && run.before[i]!.matches({ running: 'active' })).length;
  if (forwarded !== cancels) problems.push(`${cancels} cancels of a running turn, ${forwarded} reached it`);
  claims.forEach((t, i) => {
    if (t.turn !== `t${i + 1}`) problems.push(`turn ${i + 1} was named ${t.turn}`);
    // A turn names the input it takes (its turn/start's `from`), and so does the context it starts with.
    if (t.from !== SEQ[t.input]) problems.push(`turn ${i + 1} took ${JSON.stringify(t.input)} (seq ${SEQ[t.input]}) but names seq ${t.from}`);
    for (const q of t.injected) if (q.seq !== SEQ[q.text]) problems.push(`turn ${i + 1} starts with ${JSON.stringify(q.text)} as seq ${q.seq}, logged as ${SEQ[q.text]}`);
    // Only the turn handed back goes on with its step, and it keeps its id (the count of turns before it, plus one).
    if (((t as { resume?: unknown }).resume !== undefined) !== (t.input === 'waiting turn')) problems.push(`turn ${i + 1} (${JSON.stringify(t.input)}) was ${t.input === 'waiting turn' ? 'not ' : ''}handed the step to go on with`);
    // Harness input keeps its origin, so the model never reads a resume note as the user's words.
    if ((t.input === 'resume note') !== (t.origin === 'resume')) problems.push(`turn ${i + 1} claimed ${JSON.stringify(t.input)} with origin ${t.origin ?? 'user'}`);
  });
  return problems;
}

/** The wake latch: a session idle with input queued runs exactly the oldest queued input when the host wakes it. */
function afterPath(send: (e: AnyEventObject) => AnyMachineSnapshot, run: PathRun): string[] {
  const s = run.final;
  if (!s.matches('idle') || s.context.followups.length === 0) return [];
  const [head, ...rest] = (s.context.followups as unknown[]).map(textOf);
  const before = run.children.length;
  const next = send({ type: 'session.wake.requested' });
  const started = run.children.slice(before).filter((c) => c.src === 'turn');
  const problems: string[] = [];
  if (!next.matches('running') || started.length !== 1) problems.push('wake latch: a wake with input queued did not start exactly one turn');
  else if ((started[0]!.input as { input: string }).input !== head) problems.push(`wake latch: the woken turn claimed ${JSON.stringify((started[0]!.input as { input: string }).input)}, not the oldest input ${JSON.stringify(head)}`);
  if (JSON.stringify((next.context.followups as unknown[]).map(textOf)) !== JSON.stringify(rest)) problems.push('wake latch: the queue did not shrink by exactly the claimed input');
  return problems;
}

export const sessionModel: PathModel = {
  generator: 'shortest',
  input: { maxSteps: 3 },
  payloads: {
    'session.input.received': [
      ...(['followup', 'steer', 'inject'] as const).map((mode) => ({ type: 'session.input.received', seq: SEQ[mode[0]!]!, text: mode[0]!, mode })),
      { type: 'session.input.received', seq: SEQ['resume note']!, text: 'resume note', mode: 'followup', origin: 'resume' },
    ],
    'session.cancel.requested': [{ type: 'session.cancel.requested', cause: 'user' }],
    'session.turn.resumed': [{ type: 'session.turn.resumed', seq: SEQ['waiting turn']!, text: 'waiting turn', resume: RESUME }],
  },
  outputs: {
    turn: TURN_OUTPUTS,
    compaction: [{ outcome: 'compacted', tokensBefore: 900, tokensAfter: 300, shrank: true }],
    // A crashed turn, closed by the host: the steer and inject it held come back from the log as its leftovers (ADR 0021).
    closeFaultedTurn: [
      { turn: 't1', reason: 'error', steps: 1, code: 'LOG_APPEND_FAILED', leftoverSteer: [], leftoverInject: [] },
      { turn: 't1', reason: 'error', steps: 1, code: 'LOG_APPEND_FAILED', leftoverSteer: [{ seq: SEQ['late steer'], text: 'late steer' }], leftoverInject: [{ seq: SEQ['late inject'], text: 'late inject' }] },
    ],
  },
  abstract,
  check,
  afterPath,
};
