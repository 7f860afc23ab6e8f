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
