/**
 * What a tool is. Only `name`, `description` and the JSON Schema of
 * `parameters` ever reach the wire (I7); the rest is for the harness.
 */
import type { z } from 'zod';
import type { FileSystem } from './fs.js';
import type { IntentBody, LoggedResult } from './present.js';
import type { Subprocess } from './subprocess.js';

/** What a tool returns. `content` is what the model reads. */
export interface ToolOutput {
  /** `unknown`: the tool cannot say whether its effect happened (it did not confirm it stopped); logged `uncertain`. */
  status: 'ok' | 'error' | 'unknown';
  content: string;
  /** For errors: a stable code, e.g. `NOT_FOUND`, `OUTSIDE_WORKSPACE`, `EXIT_NONZERO`, `TOOL_TIMEOUT`. */
  code?: string;
}

/**
 * What a tool gets to act with. The world is reached only through the two
 * execution seams: `fs` for files, `subprocess` for commands. Nothing here
 * names a directory a tool could open by itself; where the workspace is, and
 * what is protected inside it, are the providers' to know.
 */
export interface ToolContext {
  fs: FileSystem;
  subprocess: Subprocess;
  signal: AbortSignal;
  /** The call being executed (`t1.s2.c1`), for tools that log about themselves (delegate). */
  callId?: string;
  /**
   * Asks whoever answers the session's approvals a question the tool was asked during the call (an MCP
   * server's input request, ADR 0065): logged (`question/asked`, `question/decided`), declined without asking
   * under `never`, with nobody to ask, or when the form cannot be shown. Absent: the host asks nothing.
   * Contract: never rejects.
   */
  ask?: (question: ToolQuestion, signal?: AbortSignal) => Promise<ToolAnswer>;
  /** How far the call has got, for display: ephemeral, it reaches the session's feed and never the log. */
  progress?: (report: ToolProgress) => void;
}

/** One field of a form a tool's question asks to fill: flat and primitive, as a terminal or a card can show it. */
export interface QuestionField {
  name: string;
  type: 'string' | 'number' | 'integer' | 'boolean';
  title?: string;
  description?: string;
  required: boolean;
  /** A string field that takes one of these values only. */
  options?: string[];
  default?: string | number | boolean;
}

export type QuestionValue = string | number | boolean;

/**
 * A question a tool was asked to put to a person during its call: who asks (`mcp:<name>`), what, and the
 * form's fields (none: a plain yes or no), or why its form cannot be shown (`unshowable`: declined, not asked).
 */
export type ToolQuestion = { from: string; message: string } & ({ fields: readonly QuestionField[] } | { unshowable: string });

/** The answer: `accepted` with a value for every required field, `declined` (with who or what declined), `cancelled`. */
export type ToolAnswer = { action: 'accepted'; values: Record<string, QuestionValue> } | { action: 'declined'; reason: string } | { action: 'cancelled' };

/** A progress report of a running call, as MCP's `notifications/progress` carries it. */
export interface ToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * What confines a call of a tool that writes, which is all `never` decides by
 * (ADR 0052): `sandbox`, everything it does runs through the subprocess seam
 * under the session's sandbox (bash); `workspace`, it writes through the fs
 * seam only, inside the workspace and outside its protected paths (write_file,
 * edit_file); `network`, it reaches the network from the harness itself.
 */
export type ToolConfinement = 'sandbox' | 'workspace' | 'network';

/** A zod schema, or a plain JSON Schema object (MCP tools, plugins in plain JavaScript). */
export type ToolParameters<P = any> = z.ZodType<P> | Readonly<Record<string, unknown>>;

export interface ToolDefinition<P = any> {
  name: string;
  description: string;
  parameters: ToolParameters<P>;
  /** Reads only; safe to run alongside other read-only calls and needs no approval by default. */
  readOnly: boolean;
  /** Running it twice has the same effect as once; crash repair may say so to the model. */
  idempotent: boolean;
  /**
   * It starts subagents and changes nothing itself (`delegate`, `workflow`):
   * an approval class of its own. The policy allows it at every level, since
   * what a child does is governed by the child's own `never`; and it may run
   * alongside its neighbours, as read-only calls do.
   */
  delegates?: boolean;
  /**
   * Why a call of it is a write for approval, when its name does not say so: an MCP
   * tool of a server that runs outside the sandbox, whatever the server claims
   * (ADR 0039). The question and a refusal under `never` give it as the reason.
   */
  writeReason?: string;
  /** What confines it (`ToolConfinement`); none: nothing does, so `never` refuses it unless it is read-only or delegates. */
  confinement?: ToolConfinement;
  /** A default deadline for one call, enforced by the executor. */
  timeoutMs?: number;
  /** Contract: resolves with an error output for expected failures; a throw becomes a `TOOL_ERROR` result. */
  execute(args: P, ctx: ToolContext): Promise<ToolOutput>;
  /** A pure, one-line rendering of a call for people (CLI, approvals, timelines). */
  present(args: P): string;
  /**
   * A pure rendering of a finished call for people, as a render intent (ADR 0067): a
   * function of its arguments and its logged result only, so a replay renders the same.
   * None, `undefined` or a throw: `generic`, the result's content under `present`'s line.
   */
  presentResult?(args: P, result: LoggedResult): IntentBody | undefined;
}

/** A tool whose parameters are a zod schema (every built-in): tests and callers may parse with it directly. */
export type ZodToolDefinition<P = any> = ToolDefinition<P> & { parameters: z.ZodType<P> };
