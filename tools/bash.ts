/** `bash`: run a shell command in the workspace through the injected shell. */
import { z } from 'zod';
import { failure, ok } from './output.js';
import { formatBytes } from './text.js';
import { ToolError, type ShellResult, type ToolDefinition } from '../ports/tools.js';

/**
 * Names that hold a secret, or a way to one: bridle's own (the model's key,
 * the server's token) and the user's — tokens, passwords, keys, cookies,
 * credentials, every cloud provider's variables, agent sockets that sign for
 * the user. A command the model wrote gets none of them: with the network
 * allowed it could send them anywhere, and even without, show them to the model.
 */
const SECRET_NAME = /TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|CREDENTIAL|COOKIE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|_KEYS?$|^KEYS?$|_PWD$|_AUTH_|_AUTH$/i;
const CLOUD_PREFIX = /^(AWS|AZURE|ARM|GOOGLE|GCP|GCLOUD|CLOUDSDK|DIGITALOCEAN|HCLOUD|OCI|ALIBABA_CLOUD|IBMCLOUD|SCW)_/i;
const SECRET_EXACT = new Set(['SSH_AUTH_SOCK', 'GPG_AGENT_INFO', 'KRB5CCNAME', 'BRIDLE_TOKEN']);
/** A URL with a password in it (`postgres://user:pass@host`). */
const URL_WITH_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:[^\s/@]+@/i;

/** Contract: pure; whether a command must not see this variable. */
export function isSecretVariable(name: string, value: string): boolean {
  return SECRET_EXACT.has(name.toUpperCase()) || SECRET_NAME.test(name) || CLOUD_PREFIX.test(name) || URL_WITH_PASSWORD.test(value);
}

/** Contract: pure; the environment a command runs with — the process's, less anything that looks like a secret. */
export function commandEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !isSecretVariable(k, v)) out[k] = v;
  return out;
}

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
export function formatShellResult(result: ShellResult, maxOutputBytes = BASH_MAX_OUTPUT_BYTES): string {
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

export const bashTool: ToolDefinition<BashArgs> = {
  name: 'bash',
  description:
    'Run a bash command in the workspace root and return its exit code, stdout and stderr. ' +
    `Output beyond ${formatBytes(BASH_MAX_OUTPUT_BYTES)} is cut from the middle. ` +
    'Processes it leaves running in the background are killed when it exits.',
  parameters,
  readOnly: false,
  idempotent: false,
  // The command's own deadline is enforced by the shell; this only catches a shell that hangs.
  timeoutMs: BASH_MAX_TIMEOUT_MS + 10_000,
  present: (args) => {
    const lines = args.command.split('\n');
    const first = lines[0]!.length > 80 ? `${lines[0]!.slice(0, 79)}…` : lines[0]!;
    return `bash: ${first}${lines.length > 1 ? ` (+${lines.length - 1} lines)` : ''}`;
  },
  async execute(args, ctx) {
    const timeoutMs = args.timeout_ms ?? BASH_DEFAULT_TIMEOUT_MS;
    let result: ShellResult;
    try {
      result = await ctx.shell.run({
        argv: ['bash', '-c', args.command],
        cwd: ctx.workspace,
        timeoutMs,
        maxOutputBytes: BASH_MAX_OUTPUT_BYTES,
        signal: ctx.signal,
        env: commandEnv(process.env),
      });
    } catch (err) {
      // A shell that refuses on purpose (a sandbox that cannot confine the command) names its own code.
      if (err instanceof ToolError) return failure(err.code, err.message);
      return failure('SPAWN_FAILED', `Could not start bash (${ctx.shell.id} shell): ${(err as Error).message}`);
    }
    const text = formatShellResult(result);
    if (result.timedOut) return failure('TOOL_TIMEOUT', `Command timed out after ${timeoutMs} ms and was killed.\n${text}`);
    if (ctx.signal.aborted) return failure('ABORTED', `Command was aborted.\n${text}`);
    if (result.exitCode === 0) return ok(text);
    // A command that failed after running into a sandbox limit failed because of it, most likely: say so in the code too.
    if ((result.limitsHit ?? []).length > 0) return failure('SANDBOX_LIMIT', text);
    return failure('EXIT_NONZERO', text);
  },
};
