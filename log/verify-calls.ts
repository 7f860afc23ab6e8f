/**
 * The part of verification that follows a call through its step: `tool/call`
 * matches its answer's block, approval is asked before it is decided, a call
 * is dispatched once, a tool's questions are asked while it runs, and its one
 * result comes after it, in its own step (I2).
 */
import type { EntryOf } from './entries.js';
import { ToolResultCode } from './codes.js';
import { nthCall } from './ids.js';
import type { Flag } from './verify-inputs.js';
import { callIn, stepOf, type CallState, type KnownCall, type TurnState, type Walk } from './verify-walk.js';

const RAN = new Set(['ok', 'error', 'unknown']);
const NOT_RUN_CODES = new Set<string>([ToolResultCode.ABORTED_BEFORE_DISPATCH, ToolResultCode.TOOL_NOT_STARTED]);

/** A `tool/call`: once, in the open step, and the next of its answer's tool-call blocks, as the block says. */
export function checkCall(w: Walk, e: EntryOf<'tool/call'>): void {
  const s = stepOf(w, e);
  if (w.calls.has(e.callId)) return w.flag('duplicate-call', e, `${e.callId} was already logged (seq ${w.calls.get(e.callId)!.state.call.seq})`);
  if (!s) return;
  const k = s.calls.length + 1;
  const b = s.blocks[k - 1];
  if (e.callId !== nthCall(s.id, k) || !b || b.id !== e.toolCallId || b.name !== e.name || b.arguments !== e.arguments) {
    return w.flag('forged-entry', e, `${e.callId} does not match tool call ${k} of ${s.id}'s answer`);
  }
  const c: CallState = { call: e, asked: false, decided: false, settled: false };
  s.calls.push(c);
  w.calls.set(e.callId, { state: c, step: s.id });
}

/** An `approval/asked`: once, before the call is dispatched or settled — or again by a later process (ADR 0027). */
export function checkAsked(w: Walk, e: EntryOf<'approval/asked'>): void {
  const c = callIn(w, e);
  // Asked again, unanswered, by a process that went on with the log after the one that asked stopped (ADR 0027).
  const again = c !== undefined && c.asked && !c.decided && c.askedAt !== undefined && w.reopens > c.askedAt;
  if (c && ((c.asked && !again) || c.dispatch || c.settled)) w.flag('forged-entry', e, `approval asked for ${e.callId} after it was already asked, dispatched or settled`);
  else if (c) {
    c.asked = true;
    c.askedAt = w.reopens;
  }
}

/** An `approval/decided`: answers a question asked, once. */
export function checkDecided(w: Walk, e: EntryOf<'approval/decided'>): void {
  const c = callIn(w, e);
  if (c && (!c.asked || c.decided)) w.flag('forged-entry', e, `approval decided for ${e.callId}, which was ${c.decided ? 'already decided' : 'never asked'}`);
  else if (c) {
    c.decided = true;
    c.answer = e;
  }
}

/** A `tool/dispatch`: once, before the result, under the call's name. */
export function checkDispatch(w: Walk, e: EntryOf<'tool/dispatch'>): void {
  const c = callIn(w, e);
  if (c && (c.dispatch || c.settled || c.call.name !== e.name)) w.flag('forged-entry', e, `dispatch of ${e.callId} ${c.settled ? 'after its result' : c.dispatch ? 'twice' : `names ${e.name}, the call ${c.call.name}`}`);
  else if (c) c.dispatch = e;
}

/** A `tool/result`, counted by status (appended ones), and checked against the call it settles. */
export function checkToolResult(w: Walk, e: EntryOf<'tool/result'>): void {
  if (e.surfaceOp === 'append') w.totals.calls[e.status] = (w.totals.calls[e.status] ?? 0) + 1;
  checkResult(e, w.calls.get(e.callId), w.turn, w.compaction !== undefined, w.flag);
}

/** A `tool/result` against the call it settles (`known`), in the open turn's open step (I2). */
function checkResult(e: EntryOf<'tool/result'>, known: KnownCall | undefined, turn: TurnState | undefined, compacting: boolean, flag: Flag): void {
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

/**
 * A tool's question (ADR 0065) is asked while its call runs (dispatched, no result yet), numbered in order
 * (`<callId>.q<n>`), and decided at most once; one left open is closed by the call's result, never answered later.
 */
export function checkQuestion(w: Walk, e: EntryOf<'question/asked'> | EntryOf<'question/decided'>): void {
  const c = callIn(w, e);
  if (!c) return;
  if (!c.dispatch || c.settled) return w.flag('forged-entry', e, `${e.kind} ${e.question} for ${e.callId}, which is not running (${c.settled ? 'it has its result' : 'not dispatched'})`);
  if (e.kind === 'question/asked') {
    const n = (c.questions ?? 0) + 1;
    if (e.question !== `${e.callId}.q${n}`) return w.flag('forged-entry', e, `question/asked ${e.question}, but question ${n} of ${e.callId} is ${e.callId}.q${n}`);
    c.questions = n;
    c.openQuestion = e.question;
    return;
  }
  if (c.openQuestion !== e.question) return w.flag('forged-entry', e, `question/decided ${e.question}, which is ${c.openQuestion ? `not the open question (${c.openQuestion})` : 'not open'}`);
  c.openQuestion = undefined;
}

/** The calls never settled, as `pending` in the totals. */
export function countPending(w: Walk): void {
  for (const c of w.calls.values()) if (!c.state.settled) w.totals.calls.pending = (w.totals.calls.pending ?? 0) + 1;
}
