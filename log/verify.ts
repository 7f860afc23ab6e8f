/**
 * Verifying a session log: one pass over parsed entries that checks what the
 * schemas alone cannot — seq order, turn/step nesting, I2 (each call one
 * result, after it, in its own step), I3, compaction brackets, replace ops,
 * checkpoint placement, and entries that claim what did not happen (forged).
 *
 * A crash can only leave something unfinished at the end. With
 * `allowOpenTail`, that open end is not a violation but is described in
 * `open`, for repair; everything before it must still be clean.
 */
import type { Entry, EntryOf, ToolCallBlock } from './entries.js';
import { ToolResultCode } from './codes.js';
import { nthCall, nthStep, nthTurn } from './ids.js';
import type { OpenCall, OpenTail, Totals, Verdict, VerifyOptions, Violation } from './verdict.js';
import { InputLinks, type Flag } from './verify-inputs.js';
import { ralphStep, type RalphState } from './verify-ralph.js';
import { SurfaceTracker } from './verify-surface.js';
import { isVisible } from './visible.js';

export type { OpenCall, OpenTail, Totals, Verdict, VerifyOptions, Violation } from './verdict.js';

interface CallState {
  call: EntryOf<'tool/call'>;
  dispatch?: EntryOf<'tool/dispatch'>;
  asked: boolean;
  /** How many reopenings the log held when it was asked: a process that goes on with it asks again (ADR 0027). */
  askedAt?: number;
  decided: boolean;
  /** The `approval/decided` that answered it. */
  answer?: EntryOf<'approval/decided'>;
  settled: boolean;
  /** Its tool's questions (ADR 0065): how many were asked, and the one not decided yet. */
  questions?: number;
  openQuestion?: string;
}
interface StepState {
  id: string;
  seq: number;
  answer?: EntryOf<'assistant/message'>;
  /** The answer's tool-call blocks, once it is logged. */
  blocks: ToolCallBlock[];
  calls: CallState[];
}
interface TurnState {
  id: string;
  seq: number;
  steps: number;
  step?: StepState;
  /** A `budget/asked` with no `budget/decided` yet (ADR 0047). */
  budgetAsked?: boolean;
}

const callBlocks = (a: EntryOf<'assistant/message'> | undefined): ToolCallBlock[] =>
  a ? a.blocks.filter((b): b is ToolCallBlock => b.type === 'tool-call') : [];
const RAN = new Set(['ok', 'error', 'unknown']);
const NOT_RUN_CODES = new Set<string>([ToolResultCode.ABORTED_BEFORE_DISPATCH, ToolResultCode.TOOL_NOT_STARTED]);


/** A `tool/result` against the call it settles (`known`), in the open turn's open step (I2). */
function checkResult(e: EntryOf<'tool/result'>, known: { state: CallState; step: string } | undefined, turn: TurnState | undefined, compacting: boolean, flag: Flag): void {
  if (e.surfaceOp !== 'append') {
    // A pruned result (compaction): it stands in for the call's settled result, whose place the surface check verified.
    if (!known?.state.settled) flag('orphan-result', e, `a replacing result for ${e.callId}, which has no settled result to replace`);
    else if (!compacting) flag('bad-replace', e, `a replacing result for ${e.callId} outside a compaction bracket`);
    return;
  }
  if (!known) return flag('orphan-result', e, `result for ${e.callId}, which has no earlier tool/call (I2)`);
  const s = turn?.step;
  const c = s && s.id === known.step && turn!.id === e.turn && s.id === e.step ? known.state : undefined;
  if (!c) {
    flag(known.state.settled ? 'duplicate-result' : 'forged-entry', e, `result for ${e.callId} (a call of ${known.step}) ${s ? `inside step ${s.id}` : 'outside any step'}`);
    known.state.settled = true;
    return;
  }
  if (c.settled) flag('duplicate-result', e, `a second result for ${e.callId} (I2)`);
  else if (e.toolCallId !== c.call.toolCallId || e.name !== c.call.name) flag('forged-entry', e, `result for ${e.callId} names ${e.name}/${e.toolCallId}, the call ${c.call.name}/${c.call.toolCallId}`);
  else if (RAN.has(e.status) && !c.dispatch) flag('forged-entry', e, `result for ${e.callId} says it ran (${e.status}), but it was never dispatched`);
  else if (e.code !== undefined && NOT_RUN_CODES.has(e.code) && c.dispatch) flag('forged-entry', e, `result for ${e.callId} says ${e.code}, but it was dispatched (seq ${c.dispatch.seq})`);
  c.settled = true;
}

/** Contract: pure and linear in the log; never throws for any list of schema-valid entries. */
export function verifyLog(entries: readonly Entry[], opts: VerifyOptions = {}): Verdict {
  const violations: Violation[] = [];
  const totals: Totals = { entries: entries.length, turns: 0, turnEnds: {}, steps: 0, calls: {}, retries: 0, repairs: 0, checkpoints: 0 };
  const flag: Flag = (violation, e, message) => void violations.push({ violation, seq: e?.seq ?? null, message });
  const calls = new Map<string, { state: CallState; step: string }>();
  const surface = new SurfaceTracker();
  const subagents = new Map<string, { callId: string; child: string }>();
  let turn: TurnState | undefined;
  let lastEnded: string | undefined;
  let checkpointed: string | undefined;
  let compaction: EntryOf<'compaction/start'> | undefined;
  const ralph: RalphState = { started: false, ended: false };
  /** Where the session runs as the log has said so far: `session/start`'s cwd, then each move's `to` (ADR 0041). */
  let workspace: string | undefined;
  let prevSeq = 0;
  const start = entries[0];
  const inputs = new InputLinks(start?.kind === 'session/start' && start.format >= 2, flag);
  const linked = inputs.linked;

  /** The open step, when `e` names it; otherwise flags `e` as forged. */
  const stepOf = (e: Entry & { turn: string; step: string }): StepState | undefined => {
    const s = turn?.step;
    if (s && turn!.id === e.turn && s.id === e.step) return s;
    flag('forged-entry', e, `${e.kind} names step ${e.step}, but ${s ? `the open step is ${s.id}` : 'no step is open'}`);
    return undefined;
  };
  const callIn = (e: Entry & { turn: string; step: string; callId: string }): CallState | undefined => {
    const s = stepOf(e);
    const c = s?.calls.find((x) => x.call.callId === e.callId);
    if (s && !c) flag('forged-entry', e, `${e.kind} for ${e.callId}, which is not a call of ${s.id}`);
    return c;
  };
  const closeStep = (t: TurnState, at: Entry) => {
    const s = t.step!;
    for (const c of s.calls) if (!c.settled) flag('missing-result', at, `${c.call.callId} (${c.call.name}) has no tool/result before ${s.id} ends (I2)`);
    const blocks = s.blocks;
    if (s.answer?.finish.kind === 'ok' && s.calls.length < blocks.length) {
      flag('missing-call', at, `${s.id}'s answer holds ${blocks.length} tool calls but only ${s.calls.length} were logged as tool/call`);
    }
    t.step = undefined;
  };

  let reopens = 0;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.kind === 'session/reopen') reopens++;
    if (i === 0 && e.seq !== 1) flag('seq-gap', e, `the log starts at seq ${e.seq}, not 1`);
    else if (i > 0 && e.seq > prevSeq + 1) flag('seq-gap', e, `seq jumps from ${prevSeq} to ${e.seq}`);
    else if (i > 0 && e.seq <= prevSeq) flag('seq-reorder', e, `seq ${e.seq} comes after seq ${prevSeq}`);
    prevSeq = Math.max(prevSeq, e.seq);
    if (i === 0 && e.kind !== 'session/start') flag('missing-session-start', e, `the log begins with ${e.kind}, not session/start`);
    if (isVisible(e)) {
      const problem = surface.apply(e);
      if (problem) flag('bad-replace', e, problem);
    }

    switch (e.kind) {
      case 'session/start':
        if (i > 0) flag('forged-entry', e, 'a second session/start');
        workspace ??= e.cwd;
        break;
      case 'turn/start': {
        if (turn) {
          flag('missing-turn-end', e, `turn ${turn.id} (seq ${turn.seq}) never ended before ${e.turn} began (I3)`);
          if (turn.step) closeStep(turn, e);
        }
        totals.turns++;
        if (e.turn !== nthTurn(totals.turns)) flag('bad-turn-id', e, `turn ${e.turn} should be ${nthTurn(totals.turns)}`);
        turn = { id: e.turn, seq: e.seq, steps: 0 };
        // A steer the turn before never took becomes this turn's input.
        inputs.take(e, e.from, ['followup', 'steer'], e.input);
        break;
      }
      case 'user/message':
        // A summary logged by a compaction between turns belongs to no open turn (ADR 0005).
        if (e.origin === 'summary' && e.surfaceOp !== 'append' && compaction) break;
        if (turn?.id !== e.turn) flag('forged-entry', e, `user/message names turn ${e.turn}, but ${turn ? `the open turn is ${turn.id}` : 'no turn is open'}`);
        if (e.origin === 'steer' || e.origin === 'inject') inputs.take(e, e.from, [e.origin], e.text);
        else if (e.from !== undefined) flag('bad-input-link', e, `a user/message of origin ${e.origin} names input seq ${e.from}; only a steer or inject delivers one`);
        break;
      case 'session/input':
        inputs.add(e);
        break;
      case 'session/cancel':
      case 'session/compact':
      case 'session/end':
        if (!linked) flag('forged-entry', e, `${e.kind} in a format 1 log`);
        break;
      case 'step/start': {
        if (!turn || turn.id !== e.turn) {
          flag('step-outside-turn', e, `step ${e.step} names turn ${e.turn}, but ${turn ? `the open turn is ${turn.id}` : 'no turn is open'}`);
          break;
        }
        if (turn.step) {
          flag('missing-step-end', e, `step ${turn.step.id} never ended before ${e.step} began`);
          closeStep(turn, e);
        }
        turn.steps++;
        totals.steps++;
        if (e.step !== nthStep(turn.id, turn.steps)) flag('bad-step-id', e, `step ${e.step} should be ${nthStep(turn.id, turn.steps)}`);
        turn.step = { id: e.step, seq: e.seq, blocks: [], calls: [] };
        break;
      }
      case 'request/header':
        stepOf(e);
        break;
      case 'model/retry':
        totals.retries++;
        stepOf(e);
        break;
      case 'assistant/message': {
        const s = stepOf(e);
        if (s?.answer) flag('forged-entry', e, `a second answer in step ${s.id} (the first is seq ${s.answer.seq})`);
        else if (s) {
          s.answer = e;
          s.blocks = callBlocks(e);
        }
        break;
      }
      case 'tool/call': {
        const s = stepOf(e);
        if (calls.has(e.callId)) {
          flag('duplicate-call', e, `${e.callId} was already logged (seq ${calls.get(e.callId)!.state.call.seq})`);
          break;
        }
        if (!s) break;
        const k = s.calls.length + 1;
        const b = s.blocks[k - 1];
        if (e.callId !== nthCall(s.id, k) || !b || b.id !== e.toolCallId || b.name !== e.name || b.arguments !== e.arguments) {
          flag('forged-entry', e, `${e.callId} does not match tool call ${k} of ${s.id}'s answer`);
          break;
        }
        const c: CallState = { call: e, asked: false, decided: false, settled: false };
        s.calls.push(c);
        calls.set(e.callId, { state: c, step: s.id });
        break;
      }
      case 'approval/asked': {
        const c = callIn(e);
        // Asked again, unanswered, by a process that went on with the log after the one that asked stopped (ADR 0027).
        const again = c !== undefined && c.asked && !c.decided && c.askedAt !== undefined && reopens > c.askedAt;
        if (c && ((c.asked && !again) || c.dispatch || c.settled)) flag('forged-entry', e, `approval asked for ${e.callId} after it was already asked, dispatched or settled`);
        else if (c) {
          c.asked = true;
          c.askedAt = reopens;
        }
        break;
      }
      case 'approval/decided': {
        const c = callIn(e);
        if (c && (!c.asked || c.decided)) flag('forged-entry', e, `approval decided for ${e.callId}, which was ${c.decided ? 'already decided' : 'never asked'}`);
        else if (c) {
          c.decided = true;
          c.answer = e;
        }
        break;
      }
      case 'tool/dispatch': {
        const c = callIn(e);
        if (c && (c.dispatch || c.settled || c.call.name !== e.name)) flag('forged-entry', e, `dispatch of ${e.callId} ${c.settled ? 'after its result' : c.dispatch ? 'twice' : `names ${e.name}, the call ${c.call.name}`}`);
        else if (c) c.dispatch = e;
        break;
      }
      case 'tool/result':
        if (e.surfaceOp === 'append') totals.calls[e.status] = (totals.calls[e.status] ?? 0) + 1;
        checkResult(e, calls.get(e.callId), turn, compaction !== undefined, flag);
        break;
      case 'step/end': {
        const s = stepOf(e);
        if (s) closeStep(turn!, e);
        break;
      }
      case 'turn/end': {
        if (!turn || turn.id !== e.turn) {
          flag('forged-entry', e, `turn/end for ${e.turn}, but ${turn ? `the open turn is ${turn.id}` : 'no turn is open'}`);
          break;
        }
        if (turn.step) {
          flag('missing-step-end', e, `step ${turn.step.id} never ended before its turn did`);
          closeStep(turn, e);
        }
        if (e.steps !== turn.steps) flag('turn-step-count', e, `turn/end of ${e.turn} counts ${e.steps} steps; the log holds ${turn.steps}`);
        totals.turnEnds[e.reason] = (totals.turnEnds[e.reason] ?? 0) + 1;
        lastEnded = e.turn;
        turn = undefined;
        break;
      }
      case 'checkpoint':
        totals.checkpoints++;
        if (turn) flag('misplaced-checkpoint', e, `checkpoint inside turn ${turn.id}: checkpoints are taken between turns`);
        else if (e.turn !== lastEnded || checkpointed === e.turn) flag('misplaced-checkpoint', e, `checkpoint for ${e.turn} must directly follow its turn/end, once`);
        checkpointed = e.turn;
        break;
      case 'repair':
        totals.repairs++;
        break;
      case 'compaction/start':
        if (compaction) flag('unmatched-compaction', e, `compaction/start while the one at seq ${compaction.seq} is still open`);
        compaction = e;
        break;
      case 'compaction/summary':
        if (!compaction) flag('unmatched-compaction', e, 'compaction/summary outside a compaction/start … end bracket');
        break;
      case 'compaction/end':
        if (!compaction) flag('unmatched-compaction', e, 'compaction/end with no open compaction/start');
        compaction = undefined;
        break;
      case 'subagent/start':
        subagents.set(`${e.callId} ${e.child}`, { callId: e.callId, child: e.child });
        break;
      case 'subagent/end':
        if (!subagents.delete(`${e.callId} ${e.child}`)) flag('forged-entry', e, `subagent/end for ${e.child} (${e.callId}), which never started`);
        break;
      case 'budget/asked':
      case 'budget/decided': {
        // Asked between steps of the open turn, before the call it gates; a decision answers the open question.
        if (!turn || turn.id !== e.turn || turn.step) {
          flag('forged-entry', e, `${e.kind} for ${e.turn}, but ${!turn ? 'no turn is open' : turn.step ? `step ${turn.step.id} is open` : `the open turn is ${turn.id}`}`);
          break;
        }
        if (e.kind === 'budget/decided' && !turn.budgetAsked) flag('forged-entry', e, `budget/decided in ${e.turn} with no open budget/asked`);
        turn.budgetAsked = e.kind === 'budget/asked';
        break;
      }
      case 'question/asked':
      case 'question/decided':
        questionStep(callIn(e), e, flag);
        break;
      case 'hook/report':
      case 'mcp/server':
      case 'skills/found':
        break;
      case 'log/not-durable':
        // A note says a save of earlier entries failed; it may stand anywhere, inside a turn or between turns.
        if (e.upTo >= e.seq) flag('forged-entry', e, `log/not-durable names seq ${e.upTo}, which is not before it`);
        break;
      case 'session/takeover':
        // A writer that took over from one that is gone (ADR 0017): the log goes on as it was.
        break;
      case 'session/policy': {
        // Logged as a process opens the log (ADR 0027): right after its reopening (and takeover), before anything runs.
        const before = entries[i - 1]?.kind;
        if (before !== 'session/reopen' && before !== 'session/takeover') flag('forged-entry', e, 'session/policy not right after a session/reopen: a policy changes only as a session is reopened');
        // A move starts where the session was: a log that skips a tree would claim commands ran where they did not.
        if (e.cwd && e.cwd.from !== workspace) flag('forged-entry', e, `session/policy moves the workspace from ${e.cwd.from}, but the session ran in ${workspace}`);
        if (e.cwd) workspace = e.cwd.to;
        break;
      }
      case 'ralph/start':
        if (ralph.started) flag('forged-entry', e, 'a second ralph/start');
        ralph.started = true;
        break;
      case 'ralph/round':
      case 'ralph/handoff':
      case 'ralph/verify':
      case 'ralph/verdict':
      case 'ralph/end': {
        // A Ralph run's own entries: between turns (it runs none), in order, each round and check closed before the next.
        if (!ralph.started) flag('forged-entry', e, `${e.kind} before ralph/start`);
        if (ralph.ended) flag('forged-entry', e, `${e.kind} after ralph/end`);
        if (turn) flag('forged-entry', e, `${e.kind} inside turn ${turn.id}`);
        const problem = ralphStep(ralph, e);
        if (problem) flag('forged-entry', e, problem);
        break;
      }
    }
  }

  if (entries.length === 0) flag('missing-session-start', undefined, 'the log is empty');
  for (const c of calls.values()) if (!c.state.settled) totals.calls.pending = (totals.calls.pending ?? 0) + 1;

  let open: OpenTail | undefined;
  if (turn || compaction) {
    if (opts.allowOpenTail) open = describeOpen(turn, compaction, [...subagents.values()]);
    else {
      if (turn) flag('open-turn', entries.find((e) => e.seq === turn!.seq), `turn ${turn.id} never ended: the log stops mid-turn (a crash?); repairable by \`bridle resume\``);
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

/**
 * A tool's question (ADR 0065) is asked while its call runs (dispatched, no result yet), numbered in order
 * (`<callId>.q<n>`), and decided at most once; one left open is closed by the call's result, never answered later.
 */
function questionStep(c: CallState | undefined, e: EntryOf<'question/asked'> | EntryOf<'question/decided'>, flag: (violation: string, e: Entry, message: string) => void): void {
  if (!c) return;
  if (!c.dispatch || c.settled) return flag('forged-entry', e, `${e.kind} ${e.question} for ${e.callId}, which is not running (${c.settled ? 'it has its result' : 'not dispatched'})`);
  if (e.kind === 'question/asked') {
    const n = (c.questions ?? 0) + 1;
    if (e.question !== `${e.callId}.q${n}`) return flag('forged-entry', e, `question/asked ${e.question}, but question ${n} of ${e.callId} is ${e.callId}.q${n}`);
    c.questions = n;
    c.openQuestion = e.question;
    return;
  }
  if (c.openQuestion !== e.question) return flag('forged-entry', e, `question/decided ${e.question}, which is ${c.openQuestion ? `not the open question (${c.openQuestion})` : 'not open'}`);
  c.openQuestion = undefined;
}
