/**
 * What a recorded log says the world did, arranged the way replay asks for
 * it: each step's model answers (retried failures first), each call's
 * decision, approval answer and tool output, each compaction's summary, each
 * turn's pre-step verdict, the steer and inject it took at each delivery
 * point, and the inbox its checkpoint holds. Pure; no machine runs here.
 */
import type { Block, Entry, Finish, Origin, Usage } from '../log/entries.js';
import type { Followup } from '../machines/session.machine.js';
import type { ApprovalAnswer, Decision } from '../machines/tool-call.machine.js';
import type { ToolOutput } from '../ports/tools.js';

/** One model request's recorded outcome; `interrupted` streams its blocks and then waits for the cancel. */
export type ModelAnswer = { kind: 'stream'; blocks: Block[]; finish: Finish; usage?: Usage } | { kind: 'interrupted'; blocks: Block[]; usage?: Usage };

export interface CallScript {
  /** The pre-execute verdict, where the log shows one (asked, denied before asking, or dispatched). */
  decision?: Decision;
  /** The approval answer, unless the call was cancelled while asking. */
  answer?: ApprovalAnswer;
  /** What the tool returned, if it ran to a result. */
  output?: ToolOutput;
  /** Its dispatch could not be made durable (`DISPATCH_NOT_DURABLE`). */
  notDurable?: boolean;
}

export type PreStepScript = { kind: 'enter'; text: string; origin: Origin } | { kind: 'reject'; reason: string } | { kind: 'fail'; cause: string };

export interface Delivery {
  text: string;
  mode: 'steer' | 'inject';
}

/** The part of a persisted session snapshot replay must reproduce before the checkpoint is written. */
export interface InboxTarget {
  followups: Followup[];
  injects: string[];
  compactPending?: boolean;
  /** The ending turn's unused steer and inject (the checkpoint's `last` keeps them). */
  leftoverSteer: string[];
  leftoverInject: string[];
}

export interface TurnScript {
  turn: string;
  /** Absent: the pre-step never answered (a cancel or a crash came first). */
  preStep?: PreStepScript;
  /** Steer and inject the turn logged, by delivery point: `measuring:<steps>` or `stepping:<steps>`. */
  deliveries: Map<string, Delivery[]>;
  /** The session's inbox in the checkpoint right after the turn's end. */
  checkpoint?: InboxTarget;
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

/** Entries no machine writes: hook problems, the delegate tool's brackets, MCP servers' starts. Replay copies them where they stand. */
export const FOREIGN_KINDS = new Set<Entry['kind']>(['hook/report', 'subagent/start', 'subagent/end', 'mcp/server']);
export const isForeign = (e: Entry | undefined): boolean => e !== undefined && FOREIGN_KINDS.has(e.kind);

/** Entries only a cancel produces (a repair's closings come after a `repair` entry and are not met live). */
export function isCancelEffect(e: Entry | undefined): boolean {
  if (!e) return false;
  switch (e.kind) {
    case 'assistant/message':
      return e.interrupted === true;
    case 'step/end':
      return e.reason === 'aborted';
    case 'tool/result':
      return e.status === 'aborted' && (e.code === 'ABORTED' || e.code === 'ABORTED_BEFORE_DISPATCH');
    case 'approval/decided':
      return e.outcome === 'cancelled' && e.by === 'cancel';
    case 'turn/end':
      return e.reason === 'aborted';
    case 'compaction/end':
      return e.outcome === 'interrupted';
    default:
      return false;
  }
}

const DENIED = /^Denied: ([\s\S]*)\. The call did not run\.$/;

function callsOf(entries: readonly Entry[]): Map<string, CallScript> {
  const calls = new Map<string, CallScript>();
  const at = (id: string) => calls.get(id) ?? (calls.set(id, {}), calls.get(id)!);
  for (const e of entries) {
    if (e.kind === 'approval/asked') at(e.callId).decision = { kind: 'ask', reason: e.reason };
    else if (e.kind === 'approval/decided' && e.by !== 'repair' && !(e.outcome === 'cancelled' && e.by === 'cancel')) {
      at(e.callId).answer = { outcome: e.outcome, by: e.by, ...(e.rule ? { rule: e.rule } : {}) };
    } else if (e.kind === 'tool/dispatch') at(e.callId).decision ??= { kind: 'allow' };
    // A compaction's replacement of a result (surfaceOp replace) is not the tool's outcome.
    else if (e.kind === 'tool/result' && e.surfaceOp === 'append') {
      const c = at(e.callId);
      if (e.status === 'denied') c.decision ??= { kind: 'deny', reason: DENIED.exec(e.content)?.[1] ?? e.content };
      else if (e.status === 'ok' || e.status === 'error') {
        if (e.code === 'DISPATCH_NOT_DURABLE') c.notDurable = true;
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
      const usage = e.usage ? { usage: e.usage } : {};
      push(e.step, e.interrupted ? { kind: 'interrupted', blocks: e.blocks, ...usage } : { kind: 'stream', blocks: e.blocks, finish: e.finish, ...usage });
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

/** A run of steer/inject messages splits into at most two deliveries: each logs its steers, then its injects. */
function splitRun(run: readonly Delivery[]): [Delivery[], Delivery[]] {
  let i = 0;
  while (i < run.length && run[i]!.mode === 'steer') i++;
  while (i < run.length && run[i]!.mode === 'inject') i++;
  return [run.slice(0, i), run.slice(i)];
}

function deliveriesOf(entries: readonly Entry[], from: number, to: number): Map<string, Delivery[]> {
  const out = new Map<string, Delivery[]>();
  const add = (key: string, ds: readonly Delivery[]) => ds.length && out.set(key, [...(out.get(key) ?? []), ...ds]);
  let steps = 0;
  let input = false;
  let prev: Entry | undefined;
  let run: Delivery[] = [];
  let runPrev: Entry | undefined;
  const close = (next: Entry | undefined) => {
    if (run.length === 0) return;
    // After a compaction only the step's own delivery is left; before one, or before a step, the measuring delivery comes first.
    if (runPrev?.kind === 'compaction/end') add(`stepping:${steps + 1}`, run);
    else {
      const [measuring, rest] = next?.kind === 'compaction/start' ? [run, []] : splitRun(run);
      add(`measuring:${steps}`, measuring);
      add(`stepping:${steps + 1}`, rest);
    }
    run = [];
  };
  for (let i = from; i < to; i++) {
    const e = entries[i]!;
    if (isForeign(e)) continue;
    if (e.kind === 'user/message' && input && (e.origin === 'steer' || e.origin === 'inject')) {
      if (run.length === 0) runPrev = prev;
      run.push({ text: e.text, mode: e.origin });
      continue;
    }
    close(e);
    if (e.kind === 'user/message') input = true;
    if (e.kind === 'step/start') steps++;
    prev = e;
  }
  close(undefined);
  return out;
}

function nextLive(entries: readonly Entry[], i: number): Entry | undefined {
  while (isForeign(entries[i])) i++;
  return entries[i];
}

function preStepOf(entries: readonly Entry[], start: number): PreStepScript | undefined {
  const e = nextLive(entries, start + 1);
  if (e?.kind === 'user/message') return { kind: 'enter', text: e.text, origin: e.origin };
  if (e?.kind === 'turn/end' && e.reason === 'blocked') return { kind: 'reject', reason: e.cause ?? '' };
  if (e?.kind === 'turn/end' && e.reason === 'error' && e.code === 'PRE_STEP_FAILED') return { kind: 'fail', cause: e.cause ?? '' };
  return undefined;
}

function inboxOf(e: Entry | undefined, turn: string): InboxTarget | undefined {
  if (e?.kind !== 'checkpoint' || e.turn !== turn) return undefined;
  type Ctx = Partial<Pick<InboxTarget, 'followups' | 'injects' | 'compactPending'>> & { last?: Partial<Pick<InboxTarget, 'leftoverSteer' | 'leftoverInject'>> };
  const ctx = (e.snapshot as { context?: Ctx } | null)?.context;
  if (!ctx) return undefined;
  return {
    followups: ctx.followups ?? [],
    injects: ctx.injects ?? [],
    ...(ctx.compactPending !== undefined ? { compactPending: ctx.compactPending } : {}),
    leftoverSteer: ctx.last?.leftoverSteer ?? [],
    leftoverInject: ctx.last?.leftoverInject ?? [],
  };
}

function turnsOf(entries: readonly Entry[]): Map<string, TurnScript> {
  const out = new Map<string, TurnScript>();
  entries.forEach((e, i) => {
    if (e.kind !== 'turn/start') return;
    let end = i + 1;
    while (end < entries.length && !['turn/end', 'turn/start', 'repair'].includes(entries[end]!.kind)) end++;
    const t: TurnScript = { turn: e.turn, deliveries: deliveriesOf(entries, i + 1, end) };
    // A turn closed after a failed append ends at the turn/end among the repair's closings, and has its checkpoint after it.
    const fault = entries[end];
    if (fault?.kind === 'repair' && fault.found === 'turn-fault') while (end < entries.length && entries[end]!.kind !== 'turn/end') end++;
    const last = entries[end];
    const pre = preStepOf(entries, i);
    if (pre) t.preStep = pre;
    const inbox = last?.kind === 'turn/end' ? inboxOf(nextLive(entries, end + 1), e.turn) : undefined;
    if (inbox) t.checkpoint = inbox;
    out.set(e.turn, t);
  });
  return out;
}

/** Contract: pure; reads any log that parses. */
export function scriptOf(entries: readonly Entry[]): ReplayScript {
  return { steps: stepsOf(entries), calls: callsOf(entries), summaries: summariesOf(entries), turns: turnsOf(entries), faulted: faultedSteps(entries) };
}

/** The origin the turn's input was admitted with, as the session queues it (plain text is the user's). */
export function followupOf(text: string, origin: Origin | undefined): Followup {
  return origin && origin !== 'user' ? { text, origin } : text;
}
