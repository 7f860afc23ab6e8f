/** Runs one validated tool call with a deadline and cancellation, turning every failure into a result. */
import { ToolError, type ToolContext, type ToolDefinition, type ToolOutput } from '../ports/tools.js';

export interface ExecuteOptions {
  /** Overrides `tool.timeoutMs`; leave both unset for no deadline. */
  timeoutMs?: number;
}

/** Node's timers overflow past 2^31-1 ms and fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function isToolOutput(value: unknown): value is ToolOutput {
  const v = value as ToolOutput | null | undefined;
  return (v?.status === 'ok' || v?.status === 'error') && typeof v.content === 'string';
}

function aborted(tool: ToolDefinition): ToolOutput {
  return { status: 'error', code: 'ABORTED', content: `The ${tool.name} call was aborted.` };
}

/**
 * Executes `tool` with `args` (already validated). The tool receives a signal
 * that fires when `ctx.signal` does or when the deadline passes, so whatever it
 * started (a child process, a read) is stopped, not merely ignored.
 *
 * Contract: never rejects. A thrown `ToolError` becomes an error result with its
 * code, any other throw `TOOL_ERROR`; an abort before or during the call gives
 * `ABORTED`; the deadline gives `TOOL_TIMEOUT`. It resolves as soon as one of
 * these is known, without waiting for a tool that ignores its signal.
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
  const stopped = new Promise<ToolOutput>((resolve) => {
    onAbort = () => resolve(aborted(tool));
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs !== undefined) {
      timer = setTimeout(
        () => {
          resolve({
            status: 'error',
            code: 'TOOL_TIMEOUT',
            content: `The ${tool.name} call did not finish within ${timeoutMs} ms and was stopped.`,
          });
          deadline?.abort(new ToolError('TOOL_TIMEOUT', `${tool.name} timed out`));
        },
        Math.min(Math.max(0, timeoutMs), MAX_TIMER_MS),
      );
    }
  });

  // Started synchronously, so an abort right after this call reaches a tool that is already listening.
  let started: Promise<ToolOutput>;
  try {
    started = Promise.resolve(tool.execute(args, { ...ctx, signal }));
  } catch (err) {
    started = Promise.reject(err);
  }
  const ran = started.then(
      (output): ToolOutput =>
        isToolOutput(output)
          ? output
          : { status: 'error', code: 'TOOL_ERROR', content: `The ${tool.name} tool returned no valid result.` },
      (err: unknown): ToolOutput => ({
        status: 'error',
        code: err instanceof ToolError ? err.code : 'TOOL_ERROR',
        content: describe(err),
      }),
    );

  try {
    const output = await Promise.race([ran, stopped]);
    // A tool that noticed the abort may fail first in its own words (an AbortError); the code is still ABORTED.
    // A tool that finished anyway keeps its result: its effect happened.
    if (ctx.signal.aborted && output.status === 'error' && output.code !== 'ABORTED') return aborted(tool);
    return output;
  } finally {
    clearTimeout(timer);
    if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
  }
}
