/**
 * The hooks' port: every hook's payload and verdict, as plugins see them.
 * The registry that dispatches them is the `hooks` service (`plugins/hooks/`).
 */
import type { Chunk } from '../log/chunks.js';
import type { Finish, ModelErrorCode, TurnEndReason } from '../log/entry-values.js';
import type { Entry } from '../log/entries.js';
import type { ModelRequest } from '../log/messages.js';
import type { Decision } from './approval.js';
import type { ToolConfinement, ToolContext, ToolDefinition, ToolOutput } from './tools.js';

export type Disposer = () => void;

/** The pre-step waterfall's verdict on the claimed input. */
export type PreStepDecision = { kind: 'enter'; text: string } | { kind: 'reject'; reason: string };

/** The post-execute verdict: `block` turns the result into an error the model sees (`BLOCKED`). */
export type PostDecision = { kind: 'accept' } | { kind: 'block'; feedback: string };

/** One validated call, as hooks and guards see it. */
export interface CallFacts {
  turn: string;
  step: string;
  callId: string;
  name: string;
  /** The raw arguments text, as the model sent it. */
  arguments: string;
  /** The parsed, schema-checked arguments. */
  args: unknown;
  readOnly: boolean;
  idempotent: boolean;
  /** It starts subagents (`delegate`, `workflow`): the approval class of its own. */
  delegates: boolean;
  /** Why it is a write for approval, when its tool says (ToolDefinition.writeReason). */
  writeReason?: string;
  /** What confines it, when its tool says (ToolDefinition.confinement): what `never` decides by. */
  confinement?: ToolConfinement;
  /** What approval rules match against: the command for bash, the path for file tools, else key-sorted JSON. */
  rendered: string;
}

export interface PreExecutePayload {
  call: CallFacts;
  /** The approval policy's verdict; a listener can only make it stricter. */
  policy: Decision;
}

export interface ExecutePayload {
  call: CallFacts;
  tool: ToolDefinition;
  args: unknown;
  ctx: ToolContext;
  /** The deadline the executor enforces; a listener may change it before calling `next`. */
  timeoutMs: number | undefined;
}

/**
 * The executor at the end of the `tool/execute` chain: runs one validated call with its deadline
 * (`actors/execute-tool.ts`). The host hands it to the pipeline, so `plugins/` never imports an actor.
 *
 * Contract: never rejects; every failure is a result.
 */
export type RunTool = (tool: ToolDefinition, args: unknown, ctx: ToolContext, options: { timeoutMs?: number }) => Promise<ToolOutput>;

export interface PostExecutePayload {
  call: CallFacts;
  output: ToolOutput;
}

export interface PreStepPayload {
  turn: string;
  text: string;
}

/** A guard sees every validated call, always (no listener can skip it), and can only deny: anything but a deny is "no objection". */
export type Guard = (call: CallFacts) => Decision | void | Promise<Decision | void>;

/** The model call as `llm/stream` listeners see it; `next()` runs the provider (or the next wrapper). */
export interface StreamPayload {
  request: ModelRequest;
  turn: string;
  step: string;
  /** 0 for the first attempt of a step's request, then 1, 2, … for retries. */
  attempt: number;
  signal: AbortSignal;
}

/** A failed model request, as `request-error` listeners see it: the normalized code (I8) and how many attempts failed so far. */
export interface RequestErrorPayload {
  turn: string;
  step: string;
  code: ModelErrorCode;
  finish: Extract<Finish, { kind: 'error' }>;
  /** Failed attempts of this step's request so far (1 after the first failure). */
  failures: number;
  /** Whether this turn already compacted once for an overflow (a second overflow is not retried). */
  overflowRetried: boolean;
}

/** What to do about a failed request: retry after a delay, compact the context then retry (overflow), or give up (the turn ends error). */
export type Recovery = { kind: 'retry'; delayMs: number } | { kind: 'compact' } | { kind: 'give-up' };

export interface TurnEndPayload {
  turn: string;
  reason: TurnEndReason;
  steps: number;
  code?: string;
  cause?: string;
}

/** How a hook's listeners are called (plugins/dispatch.ts). */
export type DispatchMode = 'emit' | 'parallel' | 'serial' | 'waterfall';

/** Runs the rest of the chain; without an argument, with the payload this listener received. */
export type Next<P, R> = (payload?: P) => Promise<R>;
/** A waterfall listener: returns a verdict, or nothing after calling `next()` (the chain's verdict then stands). */
export type Listener<P, R> = (payload: P, next: Next<P, R>) => R | void | Promise<R | void>;
/** A plain listener (emit, parallel, serial): the payload in (and, for a hook whose table names one, its `extra`), an answer or nothing out. */
export type Observer<P, R, X = undefined> = (payload: P, extra: X) => R | void | Promise<R | void>;

/** Every hook: its payload, its answer, and the mode it is dispatched by. */
export interface HookTable {
  'pre-step': { payload: PreStepPayload; answer: PreStepDecision; mode: 'waterfall' };
  'tool/pre-execute': { payload: PreExecutePayload; answer: Decision; mode: 'waterfall' };
  'tool/execute': { payload: ExecutePayload; answer: ToolOutput; mode: 'waterfall' };
  'tool/post-execute': { payload: PostExecutePayload; answer: PostDecision; mode: 'waterfall' };
  /** Wraps the model call: a listener may answer (a cache) without `next()`; the answer is still chunks, still logged. */
  'llm/stream': { payload: StreamPayload; answer: AsyncIterable<Chunk>; mode: 'waterfall' };
  /** Recovery by normalized code: the built-in retry, overflow-compaction and give-up policies are listeners. */
  'request-error': { payload: RequestErrorPayload; answer: Recovery; mode: 'waterfall' };
  /**
   * Every entry as it is appended; the listener's second argument is its line exactly as the store got it (the
   * canonical JSON, no `\n`), for a listener that ships entries elsewhere and need not serialize them again (ADR 0098).
   */
  'session/entry': { payload: Entry; answer: never; mode: 'emit'; extra: string };
  /** A turn ended (its `turn/end` is durable); awaited in order before the session reports idle. */
  'turn/end': { payload: TurnEndPayload; answer: never; mode: 'serial' };
  /** The session is closing; every listener is awaited, all at once. */
  'session/close': { payload: { session: string }; answer: never; mode: 'parallel' };
}
export type HookName = keyof HookTable;

/** Each hook's mode, declared once. */
export const HOOK_MODES: { readonly [K in HookName]: HookTable[K]['mode'] } = {
  'pre-step': 'waterfall',
  'tool/pre-execute': 'waterfall',
  'tool/execute': 'waterfall',
  'tool/post-execute': 'waterfall',
  'llm/stream': 'waterfall',
  'request-error': 'waterfall',
  'session/entry': 'emit',
  'turn/end': 'serial',
  'session/close': 'parallel',
};

type ExtraOf<K extends HookName> = HookTable[K] extends { extra: infer X } ? X : undefined;
export type ListenerOf<K extends HookName> = HookTable[K]['mode'] extends 'waterfall' ? Listener<HookTable[K]['payload'], HookTable[K]['answer']> : Observer<HookTable[K]['payload'], HookTable[K]['answer'], ExtraOf<K>>;

/** The `hooks` service: one registration primitive for every hook, and the guards. */
export interface Hooks {
  /** Contract: the disposer is idempotent. */
  on<K extends HookName>(hook: K, owner: string, listener: ListenerOf<K>): Disposer;
  /** Contract: the disposer is idempotent; a guard can only deny (I6). */
  guard(owner: string, guard: Guard): Disposer;
}
