/**
 * The words of the fs seam's refusals and failures, shared by its providers:
 * the model reads the same sentence whichever provider answered.
 */
import { FsIoError, FsCode } from '../../ports/fs.js';
import { ToolError } from '../../ports/tool-error.js';

export const emptyPath = () => new ToolError(FsCode.INVALID_PATH, 'The path is empty.');
export const nulByte = (userPath: string) => new ToolError(FsCode.INVALID_PATH, `Path "${userPath}" contains a NUL byte.`);
/** `via`: `''`, or ` (it resolves to …)` when links led elsewhere than the spelling says. */
export const outsideWorkspace = (userPath: string, via: string, workspace: string) =>
  new ToolError(FsCode.OUTSIDE_WORKSPACE, `Path "${userPath}"${via} is outside the workspace ${workspace}; use a path inside it.`);
export const notFound = (userPath: string) => new ToolError(FsCode.NOT_FOUND, `No such file or directory: "${userPath}".`);
export const isADirectory = (shown: string) => new ToolError(FsCode.IS_A_DIRECTORY, `"${shown}" is a directory, not a file.`);
export const changedWhileListed = (shown: string) =>
  new ToolError(FsCode.PATH_CHANGED, `"${shown}" changed while it was being listed (it is no longer the directory that was checked).`);

/** A write inside `inside` (one spelling of the protected path `protectedPath`). */
export function protectedPath(userPath: string, via: string, inside: string, protectedPath: string): ToolError {
  const isGit = protectedPath.split('/').filter(Boolean).at(-1)?.toLowerCase() === '.git';
  const why = isGit ? ' (a hook or core.fsmonitor written there would run at the user’s next git command; only the user can allow it, with --allow-git-writes)' : '';
  return new ToolError(FsCode.PROTECTED_PATH, `Path "${userPath}"${via} is inside ${inside}, which the tools may read but not write${why}.`);
}

const IO_FAILURES: Record<string, [code: string, says: string]> = {
  ENOENT: [FsCode.NOT_FOUND, 'does not exist'],
  EISDIR: [FsCode.IS_A_DIRECTORY, 'is a directory'],
  ENOTDIR: [FsCode.NOT_A_DIRECTORY, 'has a parent that is not a directory'],
  EEXIST: [FsCode.NOT_A_DIRECTORY, 'has a parent that is not a directory'],
  EACCES: [FsCode.PERMISSION_DENIED, 'is not accessible (permission denied)'],
  EPERM: [FsCode.PERMISSION_DENIED, 'is not accessible (operation not permitted)'],
  ENOSPC: [FsCode.NO_SPACE, 'could not be written: no space left on the device'],
  ELOOP: [FsCode.INVALID_PATH, 'has too many levels of symbolic links'],
  ENXIO: [FsCode.NOT_A_FILE, 'is not a regular file'],
};

/** The `FsIoError` an errno means for `shown` (`"src/x" does not exist.`), or undefined for one with no words here. */
export function ioError(errno: string, shown: string): FsIoError | undefined {
  if (!Object.hasOwn(IO_FAILURES, errno)) return undefined;
  const [code, says] = IO_FAILURES[errno]!;
  return new FsIoError(code, `"${shown}" ${says}.`);
}
