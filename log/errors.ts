/** Named errors of the log. Who is at fault: the log's bytes, not the caller. */
export class LogCorruptError extends Error {
  constructor(
    /** A stable name for the violation: `bad-json`, `bad-entry`, `unknown-kind`, `seq-gap`, `orphan-result`, … */
    readonly violation: string,
    message: string,
    readonly line?: number,
    readonly seq?: number,
  ) {
    super(message);
    this.name = 'LogCorruptError';
  }
}

/**
 * A log that cannot be opened as one: who is at fault is the environment (a
 * path that names a directory or a FIFO, a directory bridle may not write).
 * `code` is stable: `LOG_NOT_A_FILE`, `LOG_UNREADABLE`, `LOG_UNWRITABLE`.
 */
export class LogAccessError extends Error {
  constructor(
    readonly code: 'LOG_NOT_A_FILE' | 'LOG_UNREADABLE' | 'LOG_UNWRITABLE',
    message: string,
    /** The system's error code behind it (`ENOENT`, `EACCES`, …), when there is one. */
    readonly sysCode?: string,
  ) {
    super(message);
    this.name = 'LogAccessError';
  }
}

/**
 * An append the recorder could not make: `LOG_ENTRY_REJECTED` (the draft failed its schema: untrusted data
 * reached a draft unchecked, or a harness bug) or `LOG_APPEND_FAILED` (the store threw: disk full, lock lost).
 * Nothing of the entry was recorded. The session ends the running turn with this code (ADR 0012).
 */
export class LogAppendError extends Error {
  constructor(
    readonly code: 'LOG_ENTRY_REJECTED' | 'LOG_APPEND_FAILED',
    /** The kind of the entry that was not appended. */
    readonly entryKind: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'LogAppendError';
  }
}
