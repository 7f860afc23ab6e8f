/**
 * A flush that fails is said in the log (ADR 0017): right after the failure,
 * a `log/not-durable` note names what the save was to cover and the store's
 * error, so a reader — and replay, which fails the same flush — knows which
 * durability point was not reached.
 */
import type { DraftOf } from './entries.js';
import { LogNotDurableError } from './errors.js';
import type { Recorder } from './recorder.js';

export function draftNotDurable(err: LogNotDurableError): DraftOf<'log/not-durable'> {
  const d: DraftOf<'log/not-durable'> = { kind: 'log/not-durable', upTo: err.upTo, detail: err.detail };
  if (err.sysCode !== undefined) d.sysCode = err.sysCode;
  return d;
}

/**
 * Flushes; when the store's flush fails, appends the note (best effort: a
 * store that refuses it too leaves the failure to the caller alone) and
 * rejects. Contract: rejects only with `LogNotDurableError`.
 */
export async function flushOrNote(recorder: Recorder): Promise<void> {
  try {
    await recorder.flush();
  } catch (err) {
    const e = err instanceof LogNotDurableError ? err : new LogNotDurableError(recorder.lastSeq, String(err), undefined, { cause: err });
    try {
      recorder.append(draftNotDurable(e));
    } catch {}
    throw e;
  }
}

/** The cause a machine records for a flush that failed: the error's message (the same in replay, which rebuilds the error from the note). */
export const notDurableCause = (error: unknown): string => (error instanceof Error ? error.message : String(error));
