/**
 * What a recorded log says the world did, arranged the way replay asks for
 * it: each step's model answers (retried failures first), each call's
 * decision, approval answer and tool output, each compaction's summary, and
 * each turn's pre-step verdict. What reached the session from outside —
 * input, cancels, compactions asked for — is not here: those are entries,
 * which the driver sends again where they stand (ADR 0021). Pure; no machine
 * runs here, and nothing is read from an entry's prose.
 */
import { type Entry, INPUT_KINDS } from '../log/entries.js';
import type { Block, Finish, Usage } from '../log/entry-values.js';
import { budgetQuestionId } from '../log/ids.js';
import type { ApprovalAnswer, Decision } from '../ports/approval.js';
import { EMPTY_INPUT_CAUSE } from '../machines/turn.machine.js';
import type { ToolOutput } from '../ports/tools.js';
import { ToolResultCode, TurnEndCode } from '../log/codes.js';

/** One model request's recorded outcome; `interrupted` streams its blocks and then waits for the cancel. `firstChunkMs`: the time to its first chunk the log holds (ADR 0079). */
export type ModelAnswer = { kind: 'stream'; blocks: Block[]; finish: Finish; usage?: Usage; firstChunkMs?: number } | { kind: 'interrupted'; blocks: Block[]; usage?: Usage; firstChunkMs?: number };

export interface CallScript {
  /** The pre-execute verdict, where the log shows one (asked, denied before asking, or dispatched). */
  decision?: Decision;
  /** The approval answer, unless the call was cancelled while asking. */
  answer?: ApprovalAnswer;
  /** What the tool returned, if it ran to a result. */
  output?: ToolOutput;
  /** Its dispatch could not be made durable (`DISPATCH_NOT_DURABLE`). */
  notDurable?: boolean;
  /** Its result is one the store refused, logged by the closing of the turn that failed (ADR 0017): the output leads to that failure. */
  kept?: boolean;
}

export type PreStepScript = { kind: 'enter'; text: string } | { kind: 'reject'; reason: string } | { kind: 'fail'; cause: string };

export interface TurnScript {
  turn: string;
  /** Absent: the pre-step never answered (a cancel or a crash came first). */
  preStep?: PreStepScript;
}

/** A summary request's recorded answer: its text, a failure, or nothing (cancelled while it ran). */
export type SummaryScript = { ok: true; text: string } | { ok: false } | 'hang';

export interface ReplayScript {
  steps: Map<string, ModelAnswer[]>;
  calls: Map<string, CallScript>;
  /** By the 0-based index of the compaction's `compaction/start`. */
  summaries: Map<number, SummaryScript>;
  turns: Map<string, TurnScript>;
  /** Steps a failed append ended (a `turn-fault` repair closed them): where the log shows no answer, replay provokes the append that failed. */
  faulted: Set<string>;
}

/** Entries no machine writes: hook problems, the delegate tool's brackets, a writer's reopening, takeover and policy change, MCP servers' starts, the skills a session found, a tool's questions, a Ralph run's rounds and checks. Replay copies them where they stand. */
export const FOREIGN_KINDS = new Set<Entry['kind']>(['hook/report', 'subagent/start', 'subagent/end', 'session/takeover', 'session/reopen', 'session/policy', 'mcp/server', 'skills/found', 'question/asked', 'question/decided', 'ralph/start', 'ralph/round', 'ralph/handoff', 'ralph/verify', 'ralph/verdict', 'ralph/end']);
export const isForeign = (e: Entry | undefined): boolean => e !== undefined && FOREIGN_KINDS.has(e.kind);

function callsOf(entries: readonly Entry[]): Map<string, CallScript> {
  const calls = new Map<string, CallScript>();
  const at = (id: string) => calls.get(id) ?? (calls.set(id, {}), calls.get(id)!);
  let closing = false;
  // A budget question is answered like a call's (ADR 0047): by its id, the turn and which question of it.
  const budgetAsked = new Map<string, number>();
  for (const e of entries) {
    if (e.kind === 'budget/asked') budgetAsked.set(e.turn, (budgetAsked.get(e.turn) ?? 0) + 1);
    else if (e.kind === 'budget/decided') at(budgetQuestionId(e.turn, budgetAsked.get(e.turn) ?? 0)).answer = { outcome: e.outcome, by: e.by };
    if (e.kind === 'repair') closing = e.found === 'turn-fault';
    else if (e.kind === 'turn/end') closing = false;
    if (closing && e.kind === 'tool/result' && (e.status === 'ok' || e.status === 'error') && e.verdict === 'uncertain') at(e.callId).kept = true;
    if (e.kind === 'approval/asked') at(e.callId).decision = { kind: 'ask', reason: e.reason };
    else if (e.kind === 'approval/decided' && e.by !== 'repair' && !(e.outcome === 'cancelled' && e.by === 'cancel')) {
      at(e.callId).answer = { outcome: e.outcome, by: e.by, ...(e.rule ? { rule: e.rule } : {}) };
    } else if (e.kind === 'tool/dispatch') at(e.callId).decision ??= { kind: 'allow' };
    // A compaction's replacement of a result (surfaceOp replace) is not the tool's outcome.
    else if (e.kind === 'tool/result' && e.surfaceOp === 'append') {
      const c = at(e.callId);
      if (e.status === 'denied') c.decision ??= { kind: 'deny', reason: e.reason ?? '' };
      // A live `unknown` (a tool that did not confirm it stopped) is the tool's outcome; repair's TOOL_OUTCOME_UNKNOWN is not.
      else if (e.status === 'ok' || e.status === 'error' || (e.status === 'unknown' && e.code !== ToolResultCode.TOOL_OUTCOME_UNKNOWN)) {
        if (e.code === ToolResultCode.DISPATCH_NOT_DURABLE) c.notDurable = true;
        else c.output = { status: e.status, content: e.content, ...(e.code !== undefined ? { code: e.code } : {}) };
      }
    }
  }
  return calls;
}

/** The step each `turn-fault` repair closed: the `step/end` among its closings, before the turn's end. */
function faultedSteps(entries: readonly Entry[]): Set<string> {
  const out = new Set<string>();
  entries.forEach((e, i) => {
    if (e.kind !== 'repair' || e.found !== 'turn-fault') return;
    for (let j = i + 1; j < entries.length && entries[j]!.kind !== 'turn/end'; j++) {
      const f = entries[j]!;
      if (f.kind === 'step/end') out.add(f.step);
    }
  });
  return out;
}

function stepsOf(entries: readonly Entry[]): Map<string, ModelAnswer[]> {
  const steps = new Map<string, ModelAnswer[]>();
  const push = (step: string, a: ModelAnswer) => steps.set(step, [...(steps.get(step) ?? []), a]);
  for (const e of entries) {
    if (e.kind === 'model/retry') push(e.step, { kind: 'stream', blocks: [], finish: { kind: 'error', code: e.code, message: e.message, retryAfterMs: e.delayMs } });
    else if (e.kind === 'assistant/message') {
      const measured = { ...(e.usage ? { usage: e.usage } : {}), ...(e.firstChunkMs !== undefined ? { firstChunkMs: e.firstChunkMs } : {}) };
      push(e.step, e.interrupted ? { kind: 'interrupted', blocks: e.blocks, ...measured } : { kind: 'stream', blocks: e.blocks, finish: e.finish, ...measured });
    }
  }
  return steps;
}

function summariesOf(entries: readonly Entry[]): Map<number, SummaryScript> {
  const out = new Map<number, SummaryScript>();
  entries.forEach((e, i) => {
    if (e.kind !== 'compaction/start') return;
    let answer: SummaryScript = 'hang';
    for (let j = i + 1; j < entries.length; j++) {
      const f = entries[j]!;
      if (f.kind === 'compaction/summary') answer = { ok: true, text: f.text };
      if (f.kind === 'compaction/end') {
        if (answer === 'hang' && f.outcome !== 'interrupted') answer = { ok: false };
        break;
      }
      if (f.kind === 'compaction/start' || f.kind === 'repair') break;
    }
    out.set(i, answer);
  });
  return out;
}

/** Entries that may stand between what one machine step writes and the next: foreign ones, inputs, notes of failed saves. */
const isBetween = (e: Entry | undefined): boolean => e !== undefined && (isForeign(e) || INPUT_KINDS.has(e.kind) || e.kind === 'log/not-durable');

/** The next entry at or after `i` the turn itself wrote. */
function nextLive(entries: readonly Entry[], i: number): Entry | undefined {
  while (isBetween(entries[i])) i++;
  return entries[i];
}

function preStepOf(entries: readonly Entry[], start: number): PreStepScript | undefined {
  const e = nextLive(entries, start + 1);
  if (e?.kind === 'user/message') return { kind: 'enter', text: e.text };
  if (e?.kind === 'turn/end' && e.reason === 'blocked') return { kind: 'reject', reason: e.cause ?? '' };
  // A rewrite to nothing: the turn closed with zero steps (the machine's empty-input edge); its exact text is not logged, and need not be.
  if (e?.kind === 'turn/end' && e.reason === 'completed' && e.steps === 0 && e.cause === EMPTY_INPUT_CAUSE) return { kind: 'enter', text: '' };
  if (e?.kind === 'turn/end' && e.reason === 'error' && e.code === TurnEndCode.PRE_STEP_FAILED) return { kind: 'fail', cause: e.cause ?? '' };
  return undefined;
}

function turnsOf(entries: readonly Entry[]): Map<string, TurnScript> {
  const out = new Map<string, TurnScript>();
  entries.forEach((e, i) => {
    if (e.kind !== 'turn/start') return;
    const t: TurnScript = { turn: e.turn };
    const pre = preStepOf(entries, i);
    if (pre) t.preStep = pre;
    out.set(e.turn, t);
  });
  return out;
}

/** Contract: pure; reads any log that parses. */
export function scriptOf(entries: readonly Entry[]): ReplayScript {
  return { steps: stepsOf(entries), calls: callsOf(entries), summaries: summariesOf(entries), turns: turnsOf(entries), faulted: faultedSteps(entries) };
}
