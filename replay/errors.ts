/** A log replay cannot re-run through the machines, with the reason; never a silent mismatch. */
export class NotReplayableError extends Error {
  override name = 'NotReplayableError';
}

/**
 * The log names a loop replay is not running (ADR 0085): the product offers none from a file, or bridle's own
 * (`LOOP_UNAVAILABLE`), or another — a different row, module path or file (`LOOP_MISMATCH`). A log from a
 * replaced loop is never re-driven through a different one.
 */
export class LoopReplayError extends NotReplayableError {
  override name = 'LoopReplayError';
  constructor(
    readonly code: 'LOOP_MISMATCH' | 'LOOP_UNAVAILABLE',
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}
