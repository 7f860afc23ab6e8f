/**
 * The hooks' port: every hook's payload and verdict, as plugins see them.
 * The registry that dispatches them is the `hooks` service (`plugins/hooks/`).
 */
import type { Decision } from './approval.js';
import type { ToolContext, ToolDefinition, ToolOutput } from './tools.js';

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

/** Hook name → [payload, verdict]. */
export interface HookMap {
  'pre-step': [PreStepPayload, PreStepDecision];
  'tool/pre-execute': [PreExecutePayload, Decision];
  'tool/execute': [ExecutePayload, ToolOutput];
  'tool/post-execute': [PostExecutePayload, PostDecision];
}
export type HookName = keyof HookMap;
