/**
 * `bash`: run a shell command in the workspace through the subprocess seam.
 * The provider's `resolve` fills what the call leaves out (the timeout, the
 * output cap, the environment less secrets, the cwd, the confinement); the
 * result is worded from the spec that ran.
 */
import { z } from 'zod';
import type { SubprocessResult } from '../ports/subprocess.js';
import { failure, ok, BuiltinCode } from './output.js';
import { formatBytes } from './text.js';
import { terminalIntent } from './presenters.js';
import { ToolError } from '../ports/tool-error.js';
import type { ZodToolDefinition } from '../ports/tools.js';
import { ToolResultCode } from '../log/codes.js';

/** What the description promises: the `local` subprocess provider's defaults (a test keeps them equal). */
export const BASH_DEFAULT_TIMEOUT_MS = 120_000;
export const BASH_MAX_TIMEOUT_MS = 600_000;
export const BASH_MAX_OUTPUT_BYTES = 64 * 1024;

const parameters = z.strictObject({
  command: z.string().min(1).describe('The command, run with `bash -c` in the workspace root.'),
  timeout_ms: z
    .number()
    .int()
    .min(1)
    .max(BASH_MAX_TIMEOUT_MS)
    .optional()
    .describe(`Kill the command after this many milliseconds. Default ${BASH_DEFAULT_TIMEOUT_MS}.`),
});
export type BashArgs = z.infer<typeof parameters>;

function section(title: string, text: string): string[] {
  return text === '' ? [] : [`--- ${title} ---`, text.endsWith('\n') ? text.slice(0, -1) : text];
}

/** The text a model reads for a finished command: exit status first, then the streams, then what was cut. */
export function formatCommandResult(result: SubprocessResult, maxOutputBytes = BASH_MAX_OUTPUT_BYTES): string {
  const status =
    result.exitCode !== null
      ? `exit code: ${result.exitCode}`
      : `exit code: none (killed by ${result.signal ?? 'an unknown cause'})`;
  const lines = [status, ...section('stdout', result.stdout), ...section('stderr', result.stderr)];
  if (result.stdout === '' && result.stderr === '') lines.push('(no output)');
  if (result.truncatedBytes > 0) {
    lines.push(`[output capped at ${formatBytes(maxOutputBytes)}: ${result.truncatedBytes} bytes cut from the middle]`);
  }
  for (const hit of result.limitsHit ?? []) lines.push(`[sandbox limit hit — ${hit.message}]`);
  return lines.join('\n');
}

export const bashTool: ZodToolDefinition<BashArgs> = {
  name: 'bash',
  description:
    'Run a bash command in the workspace root and return its exit code, stdout and stderr. ' +
    `Output beyond ${formatBytes(BASH_MAX_OUTPUT_BYTES)} is cut from the middle. ` +
    'Processes it leaves running in the background are killed when it exits.',
  parameters,
  readOnly: false,
  confinement: 'sandbox',
  idempotent: false,
  // The command's own deadline is enforced by the subprocess provider; this only catches one that hangs.
  timeoutMs: BASH_MAX_TIMEOUT_MS + 10_000,
  present: (args) => {
    const lines = args.command.split('\n');
    const first = lines[0]!.length > 80 ? `${lines[0]!.slice(0, 79)}…` : lines[0]!;
    return `bash: ${first}${lines.length > 1 ? ` (+${lines.length - 1} lines)` : ''}`;
  },
  presentResult: (args, result) => terminalIntent(args.command, result),
  async execute(args, ctx) {
    const spec = ctx.subprocess.resolve({ argv: ['bash', '-c', args.command], timeoutMs: args.timeout_ms });
    let result: SubprocessResult;
    try {
      result = await ctx.subprocess.run(spec, ctx.signal);
    } catch (err) {
      // A provider that refuses on purpose (a sandbox that cannot confine the command, no subprocess at all) names its own code.
      if (err instanceof ToolError) return failure(err.code, err.message);
      return failure(BuiltinCode.SPAWN_FAILED, `Could not start bash (${ctx.subprocess.id} shell): ${(err as Error).message}`);
    }
    const text = formatCommandResult(result, spec.maxOutputBytes);
    if (result.timedOut) return failure(ToolResultCode.TOOL_TIMEOUT, `Command timed out after ${spec.timeoutMs} ms and was killed.\n${text}`);
    if (ctx.signal.aborted) return failure(ToolResultCode.ABORTED, `Command was aborted.\n${text}`);
    if (result.exitCode === 0) return ok(text);
    // A command that failed after running into a sandbox limit failed because of it, most likely: say so in the code too.
    if ((result.limitsHit ?? []).length > 0) return failure(BuiltinCode.SANDBOX_LIMIT, text);
    return failure(BuiltinCode.EXIT_NONZERO, text);
  },
};
