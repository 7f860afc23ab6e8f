/** A log replay cannot re-run through the machines, with the reason; never a silent mismatch. */
export class NotReplayableError extends Error {
  override name = 'NotReplayableError';
}
