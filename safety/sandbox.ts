/**
 * The sandbox seam: `confine(argv, policy)` returns the argv that runs the
 * command confined, or throws (I11: it wraps or throws, never falls back).
 * Providers live in `adapters/sandbox/` (`bwrap`, `off`). A confined launcher
 * puts every command of an inner launcher through it; the `local` subprocess
 * provider runs every command through one.
 */
import type { LimitHit, SubprocessConfinement, SubprocessResult, SubprocessSpec } from '../ports/subprocess.js';
import { ToolError } from '../ports/tool-error.js';

/** `read-only`: no writes but a private /tmp. `workspace-write`: the workspace too. `full`: anywhere the user can. */
export type SandboxMode = SubprocessConfinement['mode'];
export const SANDBOX_MODES: readonly SandboxMode[] = ['read-only', 'workspace-write', 'full'];

/** What one confined command may use at most. */
export interface SandboxLimits {
  /** Processes (and threads) alive at once. */
  processes: number;
  /** Memory in MiB, the private /tmp and /dev/shm included (needs a writable cgroup). */
  memoryMb: number;
  /** Size in MiB of the private /tmp, and of the private /dev/shm. */
  tmpMb: number;
}

/**
 * The defaults, and the one place a partial setting becomes whole limits.
 * 512 processes: ample for `make -j`, test runners and language servers, far
 * below a fork bomb that starves the host. 4 GiB: a large build, not the whole
 * machine. 1 GiB of /tmp: compilers' and test runners' scratch, while a RAM
 * tmpfs without a size would take half the memory.
 */
export const SANDBOX_LIMIT_DEFAULTS: Readonly<SandboxLimits> = { processes: 512, memoryMb: 4096, tmpMb: 1024 };

/** Contract: pure; every limit set, each missing one from `SANDBOX_LIMIT_DEFAULTS`. */
export function resolveSandboxLimits(partial: Partial<SandboxLimits> = {}): SandboxLimits {
  return {
    processes: partial.processes ?? SANDBOX_LIMIT_DEFAULTS.processes,
    memoryMb: partial.memoryMb ?? SANDBOX_LIMIT_DEFAULTS.memoryMb,
    tmpMb: partial.tmpMb ?? SANDBOX_LIMIT_DEFAULTS.tmpMb,
  };
}

/** What a confined command may do; it rides each call. */
export interface SandboxPolicy {
  mode: SandboxMode;
  /** Absolute, real. */
  workspace: string;
  /** Network access; off unless asked for. */
  network: boolean;
  /** Where the command starts; defaults to the workspace. */
  cwd?: string;
  /** Paths kept read-only even inside the workspace (the workspace's `.git` unless git writes are allowed). */
  protect?: readonly string[];
  /** Directories a command may not even read: an empty, read-only tmpfs hides each (`$BRIDLE_HOME`, `~/.bridle`). */
  hide?: readonly string[];
  /** Defaults: `SANDBOX_LIMIT_DEFAULTS`. */
  limits?: SandboxLimits;
}

/** One command, confined. */
export interface Confinement {
  argv: string[];
  /** Run `argv` as this user instead of bridle's own (bridle runs as root; the workspace belongs to someone else). */
  runAs?: { uid: number; gid: number };
  /**
   * Called once when the command has ended (`result`), or could not start
   * (undefined): frees what the call held and says which limits it hit.
   * Contract: never rejects.
   */
  finish(result: SubprocessResult | undefined): Promise<LimitHit[]>;
}

export interface Sandbox {
  readonly id: string;
  /** False only for `off`: nothing to probe, nothing enforced. */
  readonly confines: boolean;
  /** Contract: returns a confinement that runs `argv` under `policy`, or throws a `ToolError` with code `SANDBOX_UNAVAILABLE`; never runs `argv` unconfined unless it is `off`. */
  confine(argv: readonly string[], policy: SandboxPolicy): Confinement;
  /** One line for people: what the sandbox enforces under `policy`, or that it is missing. */
  describe(policy: SandboxPolicy): string;
}

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

/** The sandbox seam as a subprocess provider finds it (service `sandbox`): a sandbox and the policy every command runs under. */
export interface SandboxService {
  sandbox: Sandbox;
  /** Its `workspace` is also where commands start unless a request says otherwise. */
  policy: SandboxPolicy;
}

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
