/**
 * The sandbox seam: `confine(argv, policy)` returns the argv that runs the
 * command confined, or throws (I11: it wraps or throws, never falls back).
 * Providers live in `adapters/sandbox/` (`bwrap`, `off`). A confined launcher
 * puts every command of an inner launcher through it; the `local` subprocess
 * provider runs every command through one.
 */
import type { LimitHit, SubprocessConfinement, SubprocessResult, SubprocessSpec } from '../ports/subprocess.js';
import { ToolError } from '../ports/tool-error.js';
import { type Confinement, type Sandbox, type SandboxPolicy } from '../ports/sandbox.js';

export const SANDBOX_UNAVAILABLE = 'SANDBOX_UNAVAILABLE';

export function sandboxUnavailable(detail: string): ToolError {
  return new ToolError(
    SANDBOX_UNAVAILABLE,
    `Sandbox unavailable: ${detail}. The command did not run. Install bubblewrap (e.g. \`apt-get install bubblewrap\`) or pass \`--sandbox off\` to run commands unconfined.`,
  );
}

/** One process to start: a resolved spec (its argv maybe confined), the signal that kills it, and who runs it. */
export interface Launch extends Omit<SubprocessSpec, 'sandbox'> {
  signal: AbortSignal;
  /** Run as this user and group (a sandbox sets them when bridle runs as root; needs root). */
  uid?: number;
  gid?: number;
}

/** Starts one process and resolves with its outcome. Contract: as `spawnProcess` (`adapters/subprocess/spawn.ts`). */
export type Launcher = (launch: Launch) => Promise<SubprocessResult>;

/** How `sandbox` will confine a command under `policy`, as a spec states it: `off` confines nothing. */
export function confinementOf(sandbox: Sandbox, policy: SandboxPolicy): SubprocessConfinement {
  return sandbox.confines ? { by: sandbox.id, mode: policy.mode, network: policy.network } : { by: sandbox.id, mode: 'full', network: true };
}

const PROBE_TIMEOUT_MS = 10_000;

async function runConfined(inner: Launcher, c: Confinement, launch: Launch): Promise<SubprocessResult> {
  let result: SubprocessResult | undefined;
  try {
    result = await inner({ ...launch, argv: c.argv, ...(c.runAs ?? {}) });
  } finally {
    const hits = await c.finish(result);
    if (result && hits.length > 0) result = { ...result, limitsHit: hits };
  }
  return result;
}

/**
 * A launcher whose every command is confined by `sandbox` under `policy` (the
 * launch's cwd rides along). Before the first confined command, a no-op
 * runs under the same confinement: a sandbox that is installed but cannot
 * start (no namespaces allowed here) fails as unavailable instead of looking
 * like the command's own failure.
 *
 * Contract: rejects with a `SANDBOX_UNAVAILABLE` `ToolError` when the command
 * cannot be confined; the command then never runs, confined or not.
 */
export function createConfinedLauncher(inner: Launcher, sandbox: Sandbox, policy: SandboxPolicy): Launcher {
  let ready: Promise<void> | undefined;
  const probe = (launch: Launch): Promise<void> => {
    ready ??= Promise.resolve()
      .then(() => runConfined(inner, sandbox.confine(['true'], { ...policy, cwd: launch.cwd }), { argv: ['true'], cwd: launch.cwd, env: launch.env, timeoutMs: PROBE_TIMEOUT_MS, maxOutputBytes: 4096, signal: launch.signal }))
      .then((r: SubprocessResult) => {
        if (r.exitCode !== 0) throw sandboxUnavailable(`${sandbox.id} could not start (${r.stderr.trim() || `exit ${r.exitCode ?? r.signal}`})`);
      })
      .catch((err: unknown) => {
        ready = undefined; // not cached: the next command tries again
        throw err instanceof ToolError ? err : sandboxUnavailable(`${sandbox.id} could not start (${(err as Error).message})`);
      });
    return ready;
  };
  return async (launch) => {
    if (sandbox.confines) await probe(launch);
    return runConfined(inner, sandbox.confine(launch.argv, { ...policy, cwd: launch.cwd }), launch);
  };
}
