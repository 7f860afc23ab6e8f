/**
 * What `verifyLog` carries from one entry to the next (`Walk`): the open turn
 * and its open step, every call by id, the brackets still open, and the totals.
 * The checks of each family of entries (`verify.ts`, `verify-calls.ts`) read
 * and move it; the helpers here find the step or call an entry names.
 */
import type { Entry, EntryOf } from './entries.js';
import type { ToolCallBlock } from './entry-values.js';
import type { Totals, Violation } from './verdict.js';
import { InputLinks, type Flag } from './verify-inputs.js';
import type { RalphState } from './verify-ralph.js';
import { SurfaceTracker } from './verify-surface.js';

export interface CallState {
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
export interface StepState {
  id: string;
  seq: number;
  answer?: EntryOf<'assistant/message'>;
  /** The answer's tool-call blocks, once it is logged. */
  blocks: ToolCallBlock[];
  calls: CallState[];
}
export interface TurnState {
  id: string;
  seq: number;
  steps: number;
  step?: StepState;
  /** A `budget/asked` with no `budget/decided` yet (ADR 0047). */
  budgetAsked?: boolean;
}
/** A call as the walk knows it: its state, and the step it is a call of. */
export interface KnownCall {
  state: CallState;
  step: string;
}

export interface Walk {
  readonly entries: readonly Entry[];
  readonly violations: Violation[];
  readonly totals: Totals;
  readonly flag: Flag;
  readonly calls: Map<string, KnownCall>;
  readonly surface: SurfaceTracker;
  /** Subagents started and not ended, by `<callId> <child>`. */
  readonly subagents: Map<string, { callId: string; child: string }>;
  readonly inputs: InputLinks;
  readonly ralph: RalphState;
  turn: TurnState | undefined;
  lastEnded: string | undefined;
  checkpointed: string | undefined;
  compaction: EntryOf<'compaction/start'> | undefined;
  /** Where the session runs as the log has said so far: `session/start`'s cwd, then each move's `to` (ADR 0041). */
  workspace: string | undefined;
  prevSeq: number;
  /** The `session/reopen` entries seen so far. */
  reopens: number;
}

export function newWalk(entries: readonly Entry[]): Walk {
  const violations: Violation[] = [];
  const flag: Flag = (violation, e, message) => void violations.push({ violation, seq: e?.seq ?? null, message });
  const start = entries[0];
  return {
    entries,
    violations,
    totals: { entries: entries.length, turns: 0, turnEnds: {}, steps: 0, calls: {}, retries: 0, repairs: 0, checkpoints: 0 },
    flag,
    calls: new Map(),
    surface: new SurfaceTracker(),
    subagents: new Map(),
    inputs: new InputLinks(start?.kind === 'session/start' && start.format >= 2, flag),
    ralph: { started: false, ended: false },
    turn: undefined,
    lastEnded: undefined,
    checkpointed: undefined,
    compaction: undefined,
    workspace: undefined,
    prevSeq: 0,
    reopens: 0,
  };
}

/** The open step, when `e` names it; otherwise flags `e` as forged. */
export function stepOf(w: Walk, e: Entry & { turn: string; step: string }): StepState | undefined {
  const s = w.turn?.step;
  if (s && w.turn!.id === e.turn && s.id === e.step) return s;
  w.flag('forged-entry', e, `${e.kind} names step ${e.step}, but ${s ? `the open step is ${s.id}` : 'no step is open'}`);
  return undefined;
}

/** The call of the open step `e` names; otherwise flags `e` as forged. */
export function callIn(w: Walk, e: Entry & { turn: string; step: string; callId: string }): CallState | undefined {
  const s = stepOf(w, e);
  const c = s?.calls.find((x) => x.call.callId === e.callId);
  if (s && !c) w.flag('forged-entry', e, `${e.kind} for ${e.callId}, which is not a call of ${s.id}`);
  return c;
}

/** Ends `t`'s open step at `at`: each of its calls has its result (I2), and its answer's calls were all logged. */
export function closeStep(w: Walk, t: TurnState, at: Entry): void {
  const s = t.step!;
  for (const c of s.calls) if (!c.settled) w.flag('missing-result', at, `${c.call.callId} (${c.call.name}) has no tool/result before ${s.id} ends (I2)`);
  const blocks = s.blocks;
  if (s.answer?.finish.kind === 'ok' && s.calls.length < blocks.length) {
    w.flag('missing-call', at, `${s.id}'s answer holds ${blocks.length} tool calls but only ${s.calls.length} were logged as tool/call`);
  }
  t.step = undefined;
}
