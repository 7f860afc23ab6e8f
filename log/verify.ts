/**
 * Verifying a session log: one pass over parsed entries that checks what the
 * schemas alone cannot — seq order, turn/step nesting, I2 (each call one
 * result, after it, in its own step), I3, compaction brackets, replace ops,
 * checkpoint placement, and entries that claim what did not happen (forged).
 *
 * A crash can only leave something unfinished at the end. With
 * `allowOpenTail`, that open end is not a violation but is described in
 * `open`, for repair; everything before it must still be clean.
 *
 * The pass carries a `Walk` (`verify-walk.ts`); each family of entries has
 * its checks: the order of seqs here, turns and steps here, a call's life in
 * `verify-calls.ts`, inputs in `verify-inputs.ts`, what the model sees in
 * `verify-surface.ts`, Ralph runs in `verify-ralph.ts`.
 */
import type { Entry, EntryOf } from './entries.js';
import type { ToolCallBlock } from './entry-values.js';
import { nthCall, nthStep, nthTurn } from './ids.js';
import type { OpenCall, OpenTail, Verdict, VerifyOptions } from './verdict.js';
import { checkAsked, checkCall, checkDecided, checkDispatch, checkQuestion, checkToolResult, countPending } from './verify-calls.js';
import { ralphStep } from './verify-ralph.js';
import { closeStep, newWalk, stepOf, type TurnState, type Walk } from './verify-walk.js';
import { isVisible } from './visible.js';

/** Contract: pure and linear in the log; never throws for any list of schema-valid entries. */
export function verifyLog(entries: readonly Entry[], opts: VerifyOptions = {}): Verdict {
  const w = newWalk(entries);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.kind === 'session/reopen') w.reopens++;
    checkOrder(w, e, i);
    if (isVisible(e)) {
      const problem = w.surface.apply(e);
      if (problem) w.flag('bad-replace', e, problem);
    }
    checkEntry(w, e, i);
  }
  return verdictOf(w, opts);
}

/** Seqs run 1, 2, 3, … with no gap and no step back, and the log begins with its `session/start`. */
function checkOrder(w: Walk, e: Entry, i: number): void {
  if (i === 0 && e.seq !== 1) w.flag('seq-gap', e, `the log starts at seq ${e.seq}, not 1`);
  else if (i > 0 && e.seq > w.prevSeq + 1) w.flag('seq-gap', e, `seq jumps from ${w.prevSeq} to ${e.seq}`);
  else if (i > 0 && e.seq <= w.prevSeq) w.flag('seq-reorder', e, `seq ${e.seq} comes after seq ${w.prevSeq}`);
  w.prevSeq = Math.max(w.prevSeq, e.seq);
  if (i === 0 && e.kind !== 'session/start') w.flag('missing-session-start', e, `the log begins with ${e.kind}, not session/start`);
}

/** The checks of `e`'s kind; `i` is its place in the log. */
function checkEntry(w: Walk, e: Entry, i: number): void {
  switch (e.kind) {
    case 'session/start':
    case 'session/input':
    case 'session/cancel':
    case 'session/compact':
    case 'session/end':
      return checkSession(w, e, i);
    case 'session/policy':
      return checkPolicy(w, e, w.entries[i - 1]);
    case 'turn/start':
      return checkTurnStart(w, e);
    case 'user/message':
      return checkUserMessage(w, e);
    case 'step/start':
      return checkStepStart(w, e);
    case 'request/header':
      return void stepOf(w, e);
    case 'model/retry':
      w.totals.retries++;
      stepOf(w, e);
      return;
    case 'assistant/message':
      return checkAnswer(w, e);
    case 'tool/call':
      return checkCall(w, e);
    case 'approval/asked':
      return checkAsked(w, e);
    case 'approval/decided':
      return checkDecided(w, e);
    case 'tool/dispatch':
      return checkDispatch(w, e);
    case 'tool/result':
      return checkToolResult(w, e);
    case 'question/asked':
    case 'question/decided':
      return checkQuestion(w, e);
    case 'step/end':
      if (stepOf(w, e)) closeStep(w, w.turn!, e);
      return;
    case 'turn/end':
      return checkTurnEnd(w, e);
    case 'checkpoint':
      return checkCheckpoint(w, e);
    case 'repair':
      w.totals.repairs++;
      return;
    case 'compaction/start':
    case 'compaction/summary':
    case 'compaction/end':
      return checkCompaction(w, e);
    case 'subagent/start':
    case 'subagent/end':
      return checkSubagent(w, e);
    case 'budget/asked':
    case 'budget/decided':
      return checkBudget(w, e);
    case 'ralph/start':
    case 'ralph/round':
    case 'ralph/handoff':
    case 'ralph/verify':
    case 'ralph/verdict':
    case 'ralph/end':
      return checkRalph(w, e);
    case 'log/not-durable':
      // A note says a save of earlier entries failed; it may stand anywhere, inside a turn or between turns.
      if (e.upTo >= e.seq) w.flag('forged-entry', e, `log/not-durable names seq ${e.upTo}, which is not before it`);
      return;
    // A writer that took over from one that is gone (ADR 0017): the log goes on as it was.
    case 'session/takeover':
    case 'session/reopen':
    case 'hook/report':
    case 'mcp/server':
    case 'skills/found':
      return;
  }
}

/** The session's own entries: one `session/start`, first; inputs, cancels, compactions and ends only in a format 2 log (ADR 0021). */
function checkSession(w: Walk, e: EntryOf<'session/start' | 'session/input' | 'session/cancel' | 'session/compact' | 'session/end'>, i: number): void {
  if (e.kind === 'session/start') {
    if (i > 0) w.flag('forged-entry', e, 'a second session/start');
    w.workspace ??= e.cwd;
  } else if (e.kind === 'session/input') w.inputs.add(e);
  else if (!w.inputs.linked) w.flag('forged-entry', e, `${e.kind} in a format 1 log`);
}

/** A `turn/start` closes what the turn before left open (I3), is numbered in order, and takes its input. */
function checkTurnStart(w: Walk, e: EntryOf<'turn/start'>): void {
  const turn = w.turn;
  if (turn) {
    w.flag('missing-turn-end', e, `turn ${turn.id} (seq ${turn.seq}) never ended before ${e.turn} began (I3)`);
    if (turn.step) closeStep(w, turn, e);
  }
  w.totals.turns++;
  if (e.turn !== nthTurn(w.totals.turns)) w.flag('bad-turn-id', e, `turn ${e.turn} should be ${nthTurn(w.totals.turns)}`);
  w.turn = { id: e.turn, seq: e.seq, steps: 0 };
  // A steer the turn before never took becomes this turn's input.
  w.inputs.take(e, e.from, ['followup', 'steer'], e.input);
}

/** A `user/message` in the open turn; a steer or inject names the input it delivers, nothing else names one. */
function checkUserMessage(w: Walk, e: EntryOf<'user/message'>): void {
  // A summary logged by a compaction between turns belongs to no open turn (ADR 0005).
  if (e.origin === 'summary' && e.surfaceOp !== 'append' && w.compaction) return;
  const turn = w.turn;
  if (turn?.id !== e.turn) w.flag('forged-entry', e, `user/message names turn ${e.turn}, but ${turn ? `the open turn is ${turn.id}` : 'no turn is open'}`);
  if (e.origin === 'steer' || e.origin === 'inject') w.inputs.take(e, e.from, [e.origin], e.text);
  else if (e.from !== undefined) w.flag('bad-input-link', e, `a user/message of origin ${e.origin} names input seq ${e.from}; only a steer or inject delivers one`);
}

/** A `step/start` in the open turn, after the step before ended, numbered in order. */
function checkStepStart(w: Walk, e: EntryOf<'step/start'>): void {
  const turn = w.turn;
  if (!turn || turn.id !== e.turn) {
    return w.flag('step-outside-turn', e, `step ${e.step} names turn ${e.turn}, but ${turn ? `the open turn is ${turn.id}` : 'no turn is open'}`);
  }
  if (turn.step) {
    w.flag('missing-step-end', e, `step ${turn.step.id} never ended before ${e.step} began`);
    closeStep(w, turn, e);
  }
  turn.steps++;
  w.totals.steps++;
  if (e.step !== nthStep(turn.id, turn.steps)) w.flag('bad-step-id', e, `step ${e.step} should be ${nthStep(turn.id, turn.steps)}`);
  turn.step = { id: e.step, seq: e.seq, blocks: [], calls: [] };
}

/** One answer a step; its tool-call blocks are what the step's `tool/call` entries must match. */
function checkAnswer(w: Walk, e: EntryOf<'assistant/message'>): void {
  const s = stepOf(w, e);
  if (s?.answer) w.flag('forged-entry', e, `a second answer in step ${s.id} (the first is seq ${s.answer.seq})`);
  else if (s) {
    s.answer = e;
    s.blocks = e.blocks.filter((b): b is ToolCallBlock => b.type === 'tool-call');
  }
}

/** A `turn/end` ends the open turn, after its step, and counts its steps right. */
function checkTurnEnd(w: Walk, e: EntryOf<'turn/end'>): void {
  const turn = w.turn;
  if (!turn || turn.id !== e.turn) {
    return w.flag('forged-entry', e, `turn/end for ${e.turn}, but ${turn ? `the open turn is ${turn.id}` : 'no turn is open'}`);
  }
  if (turn.step) {
    w.flag('missing-step-end', e, `step ${turn.step.id} never ended before its turn did`);
    closeStep(w, turn, e);
  }
  if (e.steps !== turn.steps) w.flag('turn-step-count', e, `turn/end of ${e.turn} counts ${e.steps} steps; the log holds ${turn.steps}`);
  w.totals.turnEnds[e.reason] = (w.totals.turnEnds[e.reason] ?? 0) + 1;
  w.lastEnded = e.turn;
  w.turn = undefined;
}

/** A checkpoint is taken between turns, once, right after the `turn/end` it is for. */
function checkCheckpoint(w: Walk, e: EntryOf<'checkpoint'>): void {
  w.totals.checkpoints++;
  if (w.turn) w.flag('misplaced-checkpoint', e, `checkpoint inside turn ${w.turn.id}: checkpoints are taken between turns`);
  else if (e.turn !== w.lastEnded || w.checkpointed === e.turn) w.flag('misplaced-checkpoint', e, `checkpoint for ${e.turn} must directly follow its turn/end, once`);
  w.checkpointed = e.turn;
}

/** Compaction brackets: a start, an optional summary, an end, never nested. */
function checkCompaction(w: Walk, e: EntryOf<'compaction/start' | 'compaction/summary' | 'compaction/end'>): void {
  if (e.kind === 'compaction/start') {
    if (w.compaction) w.flag('unmatched-compaction', e, `compaction/start while the one at seq ${w.compaction.seq} is still open`);
    w.compaction = e;
  } else if (e.kind === 'compaction/summary') {
    if (!w.compaction) w.flag('unmatched-compaction', e, 'compaction/summary outside a compaction/start … end bracket');
  } else {
    if (!w.compaction) w.flag('unmatched-compaction', e, 'compaction/end with no open compaction/start');
    w.compaction = undefined;
  }
}

/** A subagent ends once, after it started; the ones still running at the end are part of the open tail. */
function checkSubagent(w: Walk, e: EntryOf<'subagent/start' | 'subagent/end'>): void {
  const key = `${e.callId} ${e.child}`;
  if (e.kind === 'subagent/start') w.subagents.set(key, { callId: e.callId, child: e.child });
  else if (!w.subagents.delete(key)) w.flag('forged-entry', e, `subagent/end for ${e.child} (${e.callId}), which never started`);
}

/** Asked between steps of the open turn, before the call it gates; a decision answers the open question (ADR 0047). */
function checkBudget(w: Walk, e: EntryOf<'budget/asked' | 'budget/decided'>): void {
  const turn = w.turn;
  if (!turn || turn.id !== e.turn || turn.step) {
    return w.flag('forged-entry', e, `${e.kind} for ${e.turn}, but ${!turn ? 'no turn is open' : turn.step ? `step ${turn.step.id} is open` : `the open turn is ${turn.id}`}`);
  }
  if (e.kind === 'budget/decided' && !turn.budgetAsked) w.flag('forged-entry', e, `budget/decided in ${e.turn} with no open budget/asked`);
  turn.budgetAsked = e.kind === 'budget/asked';
}

/**
 * Logged as a process opens the log (ADR 0027): right after its reopening (and takeover), before anything runs.
 * A move starts where the session was (ADR 0041): a log that skips a tree would claim commands ran where they did not.
 */
function checkPolicy(w: Walk, e: EntryOf<'session/policy'>, before: Entry | undefined): void {
  if (before?.kind !== 'session/reopen' && before?.kind !== 'session/takeover') w.flag('forged-entry', e, 'session/policy not right after a session/reopen: a policy changes only as a session is reopened');
  if (e.cwd && e.cwd.from !== w.workspace) w.flag('forged-entry', e, `session/policy moves the workspace from ${e.cwd.from}, but the session ran in ${w.workspace}`);
  if (e.cwd) w.workspace = e.cwd.to;
}

/** A Ralph run's own entries (ADR 0024): one start; then between turns (it runs none), in order, each round and check closed before the next. */
function checkRalph(w: Walk, e: EntryOf<'ralph/start' | 'ralph/round' | 'ralph/handoff' | 'ralph/verify' | 'ralph/verdict' | 'ralph/end'>): void {
  const ralph = w.ralph;
  if (e.kind === 'ralph/start') {
    if (ralph.started) w.flag('forged-entry', e, 'a second ralph/start');
    ralph.started = true;
    return;
  }
  if (!ralph.started) w.flag('forged-entry', e, `${e.kind} before ralph/start`);
  if (ralph.ended) w.flag('forged-entry', e, `${e.kind} after ralph/end`);
  if (w.turn) w.flag('forged-entry', e, `${e.kind} inside turn ${w.turn.id}`);
  const problem = ralphStep(ralph, e);
  if (problem) w.flag('forged-entry', e, problem);
}

/** What the walk found, once the log is read: an empty log, pending calls, the open end (or its violations), the checkpoints. */
function verdictOf(w: Walk, opts: VerifyOptions): Verdict {
  const { entries, violations, totals, flag, turn, compaction } = w;
  if (entries.length === 0) flag('missing-session-start', undefined, 'the log is empty');
  countPending(w);

  let open: OpenTail | undefined;
  if (turn || compaction) {
    if (opts.allowOpenTail) open = describeOpen(turn, compaction, [...w.subagents.values()]);
    else {
      if (turn) flag('open-turn', entries.find((e) => e.seq === turn.seq), `turn ${turn.id} never ended: the log stops mid-turn (a crash?); repairable by \`bridle resume\``);
      if (compaction) flag('unmatched-compaction', compaction, 'compaction/start never ended (I9)');
    }
  }
  if (opts.checkpoints && violations.length === 0 && !open) violations.push(...opts.checkpoints(entries));
  const verdict: Verdict = { ok: violations.length === 0, violations, totals };
  if (open) verdict.open = open;
  return verdict;
}

const answerOf = (e: EntryOf<'approval/decided'>): NonNullable<OpenCall['answer']> => ({ outcome: e.outcome, by: e.by, ...(e.rule ? { rule: e.rule } : {}) });

function describeOpen(turn: TurnState | undefined, compaction: EntryOf<'compaction/start'> | undefined, subagents: OpenTail['subagents']): OpenTail {
  const open: OpenTail = { unloggedCalls: [], calls: [], subagents };
  if (compaction) open.compaction = { seq: compaction.seq, estimatedTokens: compaction.estimatedTokens };
  if (!turn) return open;
  open.turn = { id: turn.id, seq: turn.seq, steps: turn.steps, ...(turn.budgetAsked ? { budgetAsked: true } : {}) };
  const s = turn.step;
  if (!s) return open;
  open.step = { id: s.id, turn: turn.id, seq: s.seq };
  for (const c of s.calls) {
    if (c.settled) continue;
    const { turn: t, step, callId, toolCallId, name } = c.call;
    open.calls.push({ turn: t, step, callId, toolCallId, name, dispatched: c.dispatch !== undefined, idempotent: c.dispatch?.idempotent ?? false, awaitingApproval: c.asked && !c.decided, ...(c.decided ? { answered: true } : {}), ...(c.answer ? { answer: answerOf(c.answer) } : {}) });
  }
  if (s.answer?.finish.kind === 'ok') {
    s.blocks
      .slice(s.calls.length)
      .forEach((b, j) => {
        open.unloggedCalls.push({ turn: turn.id, step: s.id, callId: nthCall(s.id, s.calls.length + j + 1), toolCallId: b.id, name: b.name, arguments: b.arguments });
      });
  }
  return open;
}

