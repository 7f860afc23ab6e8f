/**
 * The sandbox seam: `confine(argv, policy)` returns the argv that runs the
 * command confined, or throws (I11: it wraps or throws, never falls back).
 * Providers live in `adapters/sandbox/` (`bwrap`, `off`). A sandboxed shell puts
 * every command of an inner shell through it.
 */
import { ToolError, type LimitHit, type Shell, type ShellRequest, type ShellResult } from '../ports/tools.js';

export type { Confinement, Sandbox, SandboxLimits, SandboxMode, SandboxPolicy } from '../ports/sandbox.js';
export { resolveSandboxLimits, SANDBOX_LIMIT_DEFAULTS, SANDBOX_MODES } from '../ports/sandbox.js';
import { type Confinement, type Sandbox, type SandboxPolicy } from '../ports/sandbox.js';

export const SANDBOX_UNAVAILABLE = 'SANDBOX_UNAVAILABLE';

export function sandboxUnavailable(detail: string): ToolError {
  return new ToolError(
    SANDBOX_UNAVAILABLE,
    `Sandbox unavailable: ${detail}. The command did not run. Install bubblewrap (e.g. \`apt-get install bubblewrap\`) or pass \`--sandbox off\` to run commands unconfined.`,
  );
}

const PROBE_TIMEOUT_MS = 10_000;

async function runConfined(inner: Shell, c: Confinement, request: ShellRequest): Promise<ShellResult> {
  let result: ShellResult | undefined;
  try {
    result = await inner.run({ ...request, argv: c.argv, ...(c.runAs ?? {}) });
  } finally {
    const hits = await c.finish(result);
    if (result && hits.length > 0) result = { ...result, limitsHit: hits };
  }
  return result;
}

/**
 * A shell whose every command is confined by `sandbox` under `policy` (the
 * request's cwd rides along). Before the first confined command, a no-op
 * runs under the same confinement: a sandbox that is installed but cannot
 * start (no namespaces allowed here) fails as unavailable instead of looking
 * like the command's own failure.
 *
 * Contract: rejects with a `SANDBOX_UNAVAILABLE` `ToolError` when the command
 * cannot be confined; the command then never runs, confined or not.
 */
export function createSandboxedShell(inner: Shell, sandbox: Sandbox, policy: SandboxPolicy): Shell {
  let ready: Promise<void> | undefined;
  const probe = (request: ShellRequest): Promise<void> => {
    ready ??= Promise.resolve()
      .then(() => runConfined(inner, sandbox.confine(['true'], { ...policy, cwd: request.cwd }), { argv: ['true'], cwd: request.cwd, env: request.env, timeoutMs: PROBE_TIMEOUT_MS, maxOutputBytes: 4096, signal: request.signal }))
      .then((r: ShellResult) => {
        if (r.exitCode !== 0) throw sandboxUnavailable(`${sandbox.id} could not start (${r.stderr.trim() || `exit ${r.exitCode ?? r.signal}`})`);
      })
      .catch((err: unknown) => {
        ready = undefined; // not cached: the next command tries again
        throw err instanceof ToolError ? err : sandboxUnavailable(`${sandbox.id} could not start (${(err as Error).message})`);
      });
    return ready;
  };
  return {
    id: sandbox.confines ? `${sandbox.id}(${inner.id})` : inner.id,
    async run(request) {
      if (sandbox.confines) await probe(request);
      return runConfined(inner, sandbox.confine(request.argv, { ...policy, cwd: request.cwd }), request);
    },
  };
}
