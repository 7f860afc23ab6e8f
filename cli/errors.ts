/** A mistake in how bridle was called: one clear line, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A row module inside the session's workspace, where the agent can write (ADR 0077, 0087): exit 2; servers and ACP: `WORKSPACE_MODULE`. */
export class WorkspaceModuleError extends UsageError {
  readonly code = 'WORKSPACE_MODULE';
}

/**
 * A stored session opened under another loop than its log's `session/start` names (ADR 0088, 0096): exit 2;
 * servers, ACP and MCP: its `code`. `detail` is the message without the code.
 */
export class LoopChangedError extends UsageError {
  constructor(
    readonly code: 'LOOP_MISMATCH' | 'LOOP_UNAVAILABLE',
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
  }
}

/** A problem outside bridle's control that stops a command (no key, server unreachable): one clear line, exit 1. */
export class SetupError extends Error {
  override name = 'SetupError';
}

/** The disk refused the session's log as it was opened (full, read-only): exit 1, one line naming the store's error. */
export class SessionNotSavedError extends SetupError {
  override name = 'SessionNotSavedError';
}
