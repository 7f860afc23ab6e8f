/** Runs one validated tool call with a deadline and cancellation, turning every failure into a result. */
import { ToolError } from '../ports/tool-error.js';
import type { ToolContext, ToolDefinition, ToolOutput } from '../ports/tools.js';
import { ToolResultCode } from '../log/codes.js';

export interface ExecuteOptions {
  /** Overrides `tool.timeoutMs`; leave both unset for no deadline. */
  timeoutMs?: number;
}

/** The abort listener's options: one object for every call (the listener is also removed when the call settles). */
const ONCE = { once: true } as const;

/** Node's timers overflow past 2^31-1 ms and fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function isToolOutput(value: unknown): value is ToolOutput {
  const v = value as ToolOutput | null | undefined;
  return (v?.status === 'ok' || v?.status === 'error' || v?.status === 'unknown') && typeof v.content === 'string';
}

/** How long a tool past its deadline gets to settle after its abort (at most its own deadline): it then counts as stopped. */
export const STOP_GRACE_MS = 1_000;

/** A tool that has not settled after its deadline's abort: what it started may still be acting. */
function notConfirmedStopped(tool: ToolDefinition, timeoutMs: number, graceMs: number): ToolOutput {
  return {
    status: 'unknown',
    code: ToolResultCode.TOOL_TIMEOUT,
    content: `The ${tool.name} call did not finish within ${timeoutMs} ms. It was told to stop but had not confirmed it stopped ${graceMs} ms later, so its effect may or may not have happened, and may still happen: check before relying on it or repeating it.`,
  };
}

/** A tool that settled after its deadline's abort: stopped, or finished (its effect happened), or unsure itself. */
function afterDeadline(tool: ToolDefinition, timeoutMs: number, output: ToolOutput): ToolOutput {
  if (output.status === 'ok' || output.status === 'unknown') return output;
  return { status: 'error', code: ToolResultCode.TOOL_TIMEOUT, content: `The ${tool.name} call did not finish within ${timeoutMs} ms and was stopped.` };
}

function aborted(tool: ToolDefinition): ToolOutput {
  return { status: 'error', code: ToolResultCode.ABORTED, content: `The ${tool.name} call was aborted.` };
}

/**
 * Executes `tool` with `args` (already validated). The tool receives a signal
 * that fires when `ctx.signal` does or when the deadline passes, so whatever it
 * started (a child process, a read) is stopped, not merely ignored.
 *
 * Contract: never rejects. A thrown `ToolError` becomes an error result with its
 * code, any other throw `TOOL_ERROR`; an abort before or during the call gives
 * `ABORTED`. At the deadline the tool's signal is aborted and it gets
 * `STOP_GRACE_MS` (at most its deadline) to settle: settled, it is
 * `TOOL_TIMEOUT` "stopped" (or its own result, if it finished anyway); not
 * settled, `TOOL_TIMEOUT` with status `unknown` (its effect may or may not
 * happen). It never waits past that for a tool that ignores its signal.
 */
export async function executeTool(
  tool: ToolDefinition,
  args: unknown,
  ctx: ToolContext,
  options: ExecuteOptions = {},
): Promise<ToolOutput> {
  if (ctx.signal.aborted) return aborted(tool);

  const timeoutMs = options.timeoutMs ?? tool.timeoutMs;
  // Without a deadline the caller's signal is the only one: no second controller to combine with it (ADR 0007).
  const deadline = timeoutMs !== undefined ? new AbortController() : undefined;
  const signal = deadline ? AbortSignal.any([ctx.signal, deadline.signal]) : ctx.signal;

  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  // The call's one outcome: the first of the tool's own result, an abort, or the deadline's verdict.
  let settle!: (o: ToolOutput) => void;
  const stopped = new Promise<ToolOutput>((resolve) => {
    settle = resolve;
    onAbort = () => resolve(aborted(tool));
    ctx.signal.addEventListener('abort', onAbort, ONCE);
  });

  // Started synchronously, so an abort right after this call reaches a tool that is already listening.
  let started: Promise<ToolOutput>;
  try {
    // Without a deadline the tool's signal is the caller's: the caller's context is the tool's, not copied.
    started = Promise.resolve(tool.execute(args, signal === ctx.signal ? ctx : { ...ctx, signal }));
  } catch (err) {
    started = Promise.reject(err);
  }
  const ran = started.then(
      (output): ToolOutput =>
        isToolOutput(output)
          ? output
          : { status: 'error', code: ToolResultCode.TOOL_ERROR, content: `The ${tool.name} tool returned no valid result.` },
      (err: unknown): ToolOutput => ({
        status: 'error',
        code: err instanceof ToolError ? err.code : ToolResultCode.TOOL_ERROR,
        content: describe(err),
      }),
    );

  let timedOut = false;
  void ran.then((o) => settle(timedOut ? afterDeadline(tool, timeoutMs!, o) : o));
  if (timeoutMs !== undefined) {
    const ms = Math.min(Math.max(0, timeoutMs), MAX_TIMER_MS);
    timer = setTimeout(() => {
      timedOut = true;
      deadline?.abort(new ToolError(ToolResultCode.TOOL_TIMEOUT, `${tool.name} timed out`));
      // Only a tool that settles after its abort has confirmed it stopped; one that does not may still be acting (ADR 0052).
      const grace = Math.min(ms, STOP_GRACE_MS);
      timer = setTimeout(() => settle(notConfirmedStopped(tool, timeoutMs, grace)), grace);
    }, ms);
  }

  try {
    const output = await stopped;
    // A tool that noticed the abort may fail first in its own words (an AbortError); the code is still ABORTED.
    // A tool that finished anyway keeps its result: its effect happened.
    if (ctx.signal.aborted && output.status === 'error' && output.code !== ToolResultCode.ABORTED) return aborted(tool);
    return output;
  } finally {
    clearTimeout(timer);
    if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
  }
}
