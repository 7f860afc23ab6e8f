/**
 * The sandbox seam: `confine(argv, policy)` returns the argv that runs the
 * command confined, or throws (I11: it wraps or throws, never falls back).
 * Providers live in `adapters/shell/` (`bwrap`, `off`). A sandboxed shell puts
 * every command of an inner shell through it.
 */
import { ToolError, type Shell, type ShellRequest, type ShellResult } from '../tools/types.js';

/** `read-only`: no writes but a private /tmp. `workspace-write`: the workspace too. `full`: anywhere the user can. */
export type SandboxMode = 'read-only' | 'workspace-write' | 'full';
export const SANDBOX_MODES: readonly SandboxMode[] = ['read-only', 'workspace-write', 'full'];

/** What a confined command may do; it rides each call. */
export interface SandboxPolicy {
  mode: SandboxMode;
  /** Absolute, real. */
  workspace: string;
  /** Network access; off unless asked for. */
  network: boolean;
  /** Where the command starts; defaults to the workspace. */
  cwd?: string;
  /** Paths kept read-only even inside the workspace (e.g. `$BRIDLE_HOME`). */
  protect?: readonly string[];
}

export interface Sandbox {
  readonly id: string;
  /** False only for `off`: nothing to probe, nothing enforced. */
  readonly confines: boolean;
  /** Contract: returns a new argv that runs `argv` under `policy`, or throws a `ToolError` with code `SANDBOX_UNAVAILABLE`; never returns `argv` unconfined unless it is `off`. */
  confine(argv: readonly string[], policy: SandboxPolicy): string[];
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

const PROBE_TIMEOUT_MS = 10_000;

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
    ready ??= inner
      .run({ argv: sandbox.confine(['true'], { ...policy, cwd: request.cwd }), cwd: request.cwd, timeoutMs: PROBE_TIMEOUT_MS, maxOutputBytes: 4096, signal: request.signal })
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
      const argv = sandbox.confine(request.argv, { ...policy, cwd: request.cwd });
      if (sandbox.confines) await probe(request);
      return inner.run({ ...request, argv });
    },
  };
}
