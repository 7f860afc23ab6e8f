/**
 * The subprocess seam: how a consumer (the bash tool) runs a command without
 * knowing where. A provider fills every default in `resolve`, in one visible
 * place, and runs exactly the spec it gave back. Providers:
 * `adapters/subprocess/` (local, memory, acp-client).
 */
/** What a consumer asks for. Every field left out is the provider's to fill, in `resolve`. */
export interface SubprocessRequest {
  /** An argv, never a shell string, unless the argv itself is `['bash', '-c', cmd]`. */
  argv: readonly string[];
  /** Default: the workspace root. */
  cwd?: string;
  /** Kill the command after this long. */
  timeoutMs?: number;
  /** Cap on captured stdout+stderr bytes; the rest is cut from the middle, with a note. */
  maxOutputBytes?: number;
  /** Replaces the provider's base environment; secrets are stripped from it all the same. */
  env?: Readonly<Record<string, string>>;
}

/** How the command will be confined, as the sandbox will apply it (`full` + network: nothing is confined). */
export interface SubprocessConfinement {
  /** The sandbox provider (`bwrap`, `off`), or the subprocess provider itself when it runs nothing real (`memory`). */
  by: string;
  mode: 'read-only' | 'workspace-write' | 'full';
  network: boolean;
}

/** A request with every default filled: plain data, what `run` runs and nothing else. */
export interface SubprocessSpec {
  argv: string[];
  cwd: string;
  timeoutMs: number;
  maxOutputBytes: number;
  /** The whole environment the command gets, secrets already stripped. */
  env: Record<string, string>;
  sandbox: SubprocessConfinement;
}

/** A sandbox limit a command ran into, worded for the model. */
export interface LimitHit {
  limit: 'processes' | 'memory' | 'tmp';
  message: string;
}

export interface SubprocessResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Bytes dropped by the output cap. */
  truncatedBytes: number;
  /** Sandbox limits the command hit (a confined run sets it). */
  limitsHit?: LimitHit[];
}

export interface Subprocess {
  readonly id: string;
  /** Contract: synchronous, no side effects; every default filled here (timeout, output cap, environment less secrets, cwd, confinement); never throws for a well-formed request. */
  resolve(request: SubprocessRequest): SubprocessSpec;
  /**
   * Runs `spec` as given. Contract: never rejects for a command's own failure
   * (a non-zero exit, a timeout, a kill: all in the result); rejects with a
   * `ToolError` when the command was refused and never ran (a sandbox that
   * cannot confine it: `SANDBOX_UNAVAILABLE`; no subprocess here:
   * `SUBPROCESS_UNAVAILABLE`; a spec stating another confinement than this
   * provider applies: `INVALID_SPEC`), with another error when it could not
   * be started at all.
   * An aborted `signal` kills everything the command started.
   */
  run(spec: SubprocessSpec, signal: AbortSignal): Promise<SubprocessResult>;
}

/** The code of a provider that runs no command (the memory provider without a script for it). */
export const SUBPROCESS_UNAVAILABLE = 'SUBPROCESS_UNAVAILABLE';

