/** The errno failures the local file system words for the model, as `FsIoError`s naming the path as the caller wrote it. */
import { ToolError } from '../../ports/tool-error.js';
import { ioError } from './refusals.js';

/**
 * Contract: never throws; what to reject with for `err`, met while working on
 * `shown`: a `ToolError` as it is, an expected errno as an `FsIoError`
 * (`"src/x" does not exist.`), anything else unchanged (a bug, for the
 * executor to report).
 */
export function ioFailure(err: unknown, shown: string): unknown {
  if (err instanceof ToolError) return err;
  const errno = (err as NodeJS.ErrnoException | undefined)?.code;
  return (typeof errno === 'string' && ioError(errno, shown)) || err;
}

/** Runs `fn`, rejecting with `ioFailure` of whatever it rejects with. */
export async function worded<T>(shown: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw ioFailure(err, shown);
  }
}
