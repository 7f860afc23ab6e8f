/**
 * The sandbox seam's port: `confine(argv, policy)` returns how to run the
 * command confined, or throws (I11: it wraps or throws, never falls back).
 * Providers: `adapters/sandbox/` (`bwrap`, `off`).
 */
import type { LimitHit, SubprocessResult } from './subprocess.js';

/** `read-only`: no writes but a private /tmp. `workspace-write`: the workspace too. `full`: anywhere the user can. */
export type SandboxMode = 'read-only' | 'workspace-write' | 'full';
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
  /** Also keep read-only every `.git` found below the workspace at confinement time (nested repositories; ADR 0041). */
  protectGit?: boolean;
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


/** The `sandbox` service: the provider, and the policy this session's commands run under (the row's config over the session's workspace). */
export interface SandboxService {
  readonly provider: Sandbox;
  readonly policy: SandboxPolicy;
}
