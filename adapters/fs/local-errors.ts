/** The errno failures the local file system words for the model, as `FsIoError`s naming the path as the caller wrote it. */
import { FsIoError } from '../../ports/fs.js';
import { ToolError } from '../../ports/tool-error.js';

const FS_CODES: Record<string, [code: string, says: string]> = {
  ENOENT: ['NOT_FOUND', 'does not exist'],
  EISDIR: ['IS_A_DIRECTORY', 'is a directory'],
  ENOTDIR: ['NOT_A_DIRECTORY', 'has a parent that is not a directory'],
  EEXIST: ['NOT_A_DIRECTORY', 'has a parent that is not a directory'],
  EACCES: ['PERMISSION_DENIED', 'is not accessible (permission denied)'],
  EPERM: ['PERMISSION_DENIED', 'is not accessible (operation not permitted)'],
  ENOSPC: ['NO_SPACE', 'could not be written: no space left on the device'],
  ELOOP: ['INVALID_PATH', 'has too many levels of symbolic links'],
  ENXIO: ['NOT_A_FILE', 'is not a regular file'],
};

/**
 * Contract: never throws; what to reject with for `err`, met while working on
 * `shown`: a `ToolError` as it is, an expected errno as an `FsIoError`
 * (`"src/x" does not exist.`), anything else unchanged (a bug, for the
 * executor to report).
 */
export function ioFailure(err: unknown, shown: string): unknown {
  if (err instanceof ToolError) return err;
  const errno = (err as NodeJS.ErrnoException | undefined)?.code;
  const known = typeof errno === 'string' && Object.hasOwn(FS_CODES, errno) ? FS_CODES[errno] : undefined;
  if (known === undefined) return err;
  return new FsIoError(known[0], `"${shown}" ${known[1]}.`);
}

/** Runs `fn`, rejecting with `ioFailure` of whatever it rejects with. */
export async function worded<T>(shown: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw ioFailure(err, shown);
  }
}
