/**
 * The workflow seam's port: runs an orchestration script (JavaScript a model
 * wrote at call time) that calls `agent(prompt, options)`, `parallel(thunks)`
 * and `pipeline(items, ...stages)`. Each `agent()` is answered by the host
 * (a logged subagent of the calling session); the runner only runs the
 * script, away from the host's event loop, and hands back its result as
 * plain JSON, or a named, categorized error.
 *
 * The runner is a security boundary: a provider must give the script no
 * power but `agent`, `parallel`, `pipeline`, `fatal`, `recoverable` and
 * plain JavaScript (no host objects, modules, files, network or
 * environment), bound all of its memory and its time, and enforce
 * `maxAgents` and `concurrency` on its own side of the channel, whatever
 * the script posts. The `workflow` tool is allowed without a question
 * (`delegates`) only because of this (ADR 0037). Providers:
 * `adapters/workflow/` (`worker`: a QuickJS VM hosted by a worker thread).
 */

/** A JSON value: what a workflow's result must be. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** `fatal` escapes the whole pipeline (and ends the script unless it catches it); `recoverable` nulls only its item's slot. */
export type ErrorCategory = 'fatal' | 'recoverable';

/** What `agent()` asked for, as the script passed it (checked by the runner: a string prompt, known option keys). */
export interface AgentCall {
  prompt: string;
  options: { provider?: string; tools?: string[] };
}

/** How the host answers one `agent()`: the subagent's report, or a categorized error the script sees thrown. */
export type AgentAnswer = { ok: true; value: string } | { ok: false; category: ErrorCategory; code: string; message: string };

export type WorkflowOutcome = { ok: true; value: Json } | { ok: false; category: ErrorCategory; code: string; message: string };

/**
 * The codes a runner ends a script with (besides those a script's own `fatal(message, code)` names). `script-runtime.ts`
 * and `quickjs-host.ts` spell them as strings: their source text runs inside the VM and the worker, and may name nothing.
 */
export const WORKFLOW_CODES = {
  syntax: 'WORKFLOW_SYNTAX_ERROR',
  thrown: 'WORKFLOW_SCRIPT_ERROR',
  notSerializable: 'WORKFLOW_RESULT_NOT_SERIALIZABLE',
  tooLarge: 'WORKFLOW_RESULT_TOO_LARGE',
  deadline: 'WORKFLOW_DEADLINE',
  /** The script used more memory than its limit (ArrayBuffers included); the process stays up. */
  memory: 'WORKFLOW_MEMORY_LIMIT',
  /** More `agent()` requests than `maxAgents`: answered by the host, never run. */
  tooManyAgents: 'WORKFLOW_TOO_MANY_AGENTS',
  crashed: 'WORKFLOW_WORKER_CRASHED',
  /** An `agent()`, `parallel()` or `pipeline()` call the runtime could not read (the self-contained runtime spells it too). */
  badCall: 'WORKFLOW_BAD_CALL',
  /** A script's own `fatal(message)` or `recoverable(message)` that names no code. */
  fatal: 'WORKFLOW_FATAL',
  recoverable: 'WORKFLOW_RECOVERABLE',
  aborted: 'ABORTED',
} as const;

export interface WorkflowRequest {
  script: string;
  /** Answers each `agent()`; called at most `maxAgents` times, at most `concurrency` at once. Contract: never rejects. */
  agent(call: AgentCall): Promise<AgentAnswer>;
  /** Aborted: the script is stopped at once (ABORTED). */
  signal: AbortSignal;
}

export interface WorkflowRunner {
  /** Contract: never rejects; the script is stopped, and its worker gone, by the time it resolves. */
  run(request: WorkflowRequest): Promise<WorkflowOutcome>;
}
