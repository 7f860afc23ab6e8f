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
