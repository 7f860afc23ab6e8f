/** Small constructors for tool results, so every tool words failures the same way. */
import type { ToolError, ToolOutput } from '../ports/tools.js';

export function ok(content: string): ToolOutput {
  return { status: 'ok', content };
}

export function failure(code: string, content: string): ToolOutput {
  return { status: 'error', code, content };
}

export function fromToolError(err: ToolError): ToolOutput {
  return failure(err.code, err.message);
}

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
 * Turns an expected file-system error into a result naming `shown` (the path as
 * the model wrote it). Unexpected errors are rethrown for the executor to report.
 */
export function fsFailure(err: unknown, shown: string): ToolOutput {
  const errno = (err as NodeJS.ErrnoException | undefined)?.code;
  const known = errno === undefined ? undefined : FS_CODES[errno];
  if (known === undefined) throw err;
  return failure(known[0], `"${shown}" ${known[1]}.`);
}
