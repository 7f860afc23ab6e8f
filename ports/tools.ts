/**
 * What a tool is. Only `name`, `description` and the JSON Schema of
 * `parameters` ever reach the wire (I7); the rest is for the harness.
 */
import type { z } from 'zod';

/** What a tool returns. `content` is what the model reads. */
export interface ToolOutput {
  status: 'ok' | 'error';
  content: string;
  /** For errors: a stable code, e.g. `NOT_FOUND`, `OUTSIDE_WORKSPACE`, `EXIT_NONZERO`, `TOOL_TIMEOUT`. */
  code?: string;
}

/** The shell seam: runs an argv, never a shell string, unless the argv itself is `['bash','-lc',cmd]`. */
export interface ShellRequest {
  argv: string[];
  cwd: string;
  timeoutMs: number;
  /** Cap on captured stdout+stderr bytes; the rest is cut with a note. */
  maxOutputBytes: number;
  signal: AbortSignal;
  env?: Record<string, string>;
  /** Run as this user and group (a sandbox sets them when bridle runs as root; needs root). */
  uid?: number;
  gid?: number;
}
/** A sandbox limit a command ran into, worded for the model. */
export interface LimitHit {
  limit: 'processes' | 'memory' | 'tmp';
  message: string;
}
export interface ShellResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Bytes dropped by the output cap. */
  truncatedBytes: number;
  /** Sandbox limits the command hit (a sandboxed shell sets it). */
  limitsHit?: LimitHit[];
}
export interface Shell {
  readonly id: string;
  /** Contract: never rejects for a command's failure; rejects only when the command could not be started at all. */
  run(request: ShellRequest): Promise<ShellResult>;
}

export interface ToolContext {
  /** The workspace root, absolute and real (symlinks resolved). */
  workspace: string;
  /** `$BRIDLE_HOME`, absolute; tools must refuse paths inside it. */
  bridleHome: string;
  /** Absolute paths the file tools may read but never write (the workspace's `.git` unless git writes are allowed). */
  protect?: readonly string[];
  signal: AbortSignal;
  shell: Shell;
  /** The call being executed (`t1.s2.c1`), for tools that log about themselves (delegate). */
  callId?: string;
}

export interface ToolDefinition<P = any> {
  name: string;
  description: string;
  parameters: z.ZodType<P>;
  /** Reads only; safe to run alongside other read-only calls and needs no approval by default. */
  readOnly: boolean;
  /** Running it twice has the same effect as once; crash repair may say so to the model. */
  idempotent: boolean;
  /** A default deadline for one call, enforced by the executor. */
  timeoutMs?: number;
  /** Contract: resolves with an error output for expected failures; a throw becomes a `TOOL_ERROR` result. */
  execute(args: P, ctx: ToolContext): Promise<ToolOutput>;
  /** A pure, one-line rendering of a call for people (CLI, approvals, timelines). */
  present(args: P): string;
}

/** A named error for tool failures a tool raises on purpose. */
export class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}
