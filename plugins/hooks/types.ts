/** The hooks of the tool pipeline and the turn, with their payloads and verdicts. */
import type { Decision } from '../../machines/tool-call.machine.js';
import type { PreStepDecision } from '../../machines/turn.machine.js';
import type { ToolContext, ToolDefinition, ToolOutput } from '../../ports/tools.js';
import type { PostDecision } from './decisions.js';

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
