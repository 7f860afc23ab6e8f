/**
 * Opening a path that `resolveInWorkspace` approved, without trusting that it
 * still leads where it did: another session on the same workspace may have
 * swapped a directory for a symlink, or a file for a FIFO, since the check.
 *
 * Linux only, by design (ADR 0011). A path is first opened with `O_PATH`, which
 * pins the inode without opening it (no FIFO can block, no device sees an
 * open); `/proc/self/fd/N` then says where that inode really is, and only a
 * regular file inside the workspace is reopened, through the same magic link,
 * for reading or writing. New files and directories are created one component
 * at a time inside directories pinned the same way, never following a symlink.
 */
import { closeSync, constants, fstatSync, open as openFd, readlinkSync, type Dirent, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { ToolError } from '../../ports/tool-error.js';
import { gitComponent, isInside } from '../../safety/paths.js';
import { bridleHomeForms, type LocalRoots } from './local-resolve.js';
import { isADirectory } from './refusals.js';
import { FsCode } from '../../ports/fs.js';

/** Linux's `O_PATH` (the generic value, shared by x86 and arm); `fs.constants` does not carry it. */
const O_PATH = 0o10000000;
const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NOCTTY } = constants;

/** Where opened files must lie. A caller opening many files passes `homes` (`bridleHomeForms`) once, to spare a realpath each. */
export type OpenContext = Pick<LocalRoots, 'workspace' | 'bridleHome'> & Partial<Pick<LocalRoots, 'protectGit'>> & { homes?: readonly string[] };

/**
 * A pinned descriptor is a plain fd, not a FileHandle: `fstat`, `readlink` of
 * `/proc/self/fd/N` and `close` on an `O_PATH` fd touch no disk, so they run
 * synchronously and spare a thread-pool round trip each (grep pins every file).
 */
const pin = promisify(openFd) as (file: string, flags: number) => Promise<number>;
const fdPath = (fd: number) => `/proc/self/fd/${fd}`;
const release = (fd: number) => {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
};

function unsupported(): ToolError | undefined {
  if (process.platform === 'linux') return undefined;
  return new ToolError(FsCode.UNSUPPORTED_PLATFORM, `The file tools open files race-free through /proc/self/fd, which ${process.platform} lacks.`);
}

/**
 * Where a pinned descriptor really is, or a refusal when that is outside the
 * workspace or inside bridle's home, or (`git`, for a write) inside a `.git`:
 * a directory renamed to `.git` after the check is caught here.
 */
function confine(workspace: string, homes: readonly string[], pinned: number, shown: string, git = false): string | ToolError {
  const real = readlinkSync(fdPath(pinned));
  const changed = (where: string) =>
    new ToolError(FsCode.PATH_CHANGED, `"${shown}" changed while it was being opened: it now leads to ${real}, ${where}. Nothing was touched.`);
  for (const home of homes) if (isInside(home, real)) return changed("inside bridle's own home");
  if (!isInside(workspace, real)) return changed('outside the workspace');
  if (git && gitComponent(workspace, real) !== undefined) return changed('inside a .git');
  return real;
}

function refuseKind(stats: Stats, shown: string): ToolError | undefined {
  if (stats.isFile()) return undefined;
  if (stats.isDirectory()) return isADirectory(shown);
  if (stats.isSymbolicLink()) {
    return new ToolError(FsCode.PATH_CHANGED, `"${shown}" became a symbolic link while it was being opened. Nothing was touched.`);
  }
  return new ToolError(FsCode.NOT_A_FILE, `"${shown}" is not a regular file (a FIFO, socket or device); the file tools read and write regular files only.`);
}

export interface OpenedFile {
  handle: FileHandle;
  size: number;
}

/**
 * Pins `real` (the final component not followed), checks where it is and what
 * it is, and reopens it with `flags`. With `single`, a file with other hard
 * links is refused: writing it would change the same bytes under another name,
 * possibly outside the workspace.
 *
 * Contract: refusals are `ToolError`s (`PATH_CHANGED`, `NOT_A_FILE`,
 * `IS_A_DIRECTORY`, `HARD_LINKED`, `UNSUPPORTED_PLATFORM`); errno errors
 * (ENOENT, EACCES) are thrown, for the caller to word (`local-errors.ts`).
 */
async function pinAndReopen(ctx: OpenContext, real: string, shown: string, flags: number, single: boolean): Promise<OpenedFile | ToolError> {
  const homes = ctx.homes ?? (await bridleHomeForms(ctx.bridleHome));
  const pinned = await pin(real, O_PATH | O_NOFOLLOW);
  try {
    const stats = fstatSync(pinned);
    const refused = refuseKind(stats, shown);
    if (refused) return refused;
    const where = confine(ctx.workspace, homes, pinned, shown, flags !== O_RDONLY && ctx.protectGit === true);
    if (where instanceof ToolError) return where;
    if (single && stats.nlink > 1) {
      return new ToolError(
        FsCode.HARD_LINKED,
        `"${shown}" has ${stats.nlink} hard links; writing it would change the other names too, which may lie outside the workspace. Nothing was written.`,
      );
    }
    const handle = await open(fdPath(pinned), flags | O_NOCTTY);
    return { handle, size: stats.size };
  } finally {
    release(pinned);
  }
}

/** Opens an approved path for reading. Contract: as `pinAndReopen`. */
export async function openForRead(ctx: OpenContext, real: string, shown: string): Promise<OpenedFile | ToolError> {
  return unsupported() ?? pinAndReopen(ctx, real, shown, O_RDONLY, false);
}

/** Opens an approved, existing path for reading and writing in place (edit_file). Contract: as `pinAndReopen`. */
export async function openForUpdate(ctx: OpenContext, real: string, shown: string): Promise<OpenedFile | ToolError> {
  return unsupported() ?? pinAndReopen(ctx, real, shown, O_RDWR, true);
}

/** The directory `child` names, pinned without following a symlink; a symlink standing there means the path changed. */
async function pinDir(child: string, shown: string): Promise<number | ToolError> {
  try {
    return await pin(child, O_PATH | O_DIRECTORY | O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR' && (await lstat(child)).isSymbolicLink()) {
      return new ToolError(FsCode.PATH_CHANGED, `A directory on the way to "${shown}" became a symbolic link while it was being opened. Nothing was written.`);
    }
    throw err;
  }
}

/** Pins the directory chain `parts` below the pinned `dir`, creating missing ones. The caller releases what it gets unless it is `dir`. */
async function pinDirs(dir: number, parts: readonly string[], shown: string): Promise<number | ToolError> {
  let current = dir;
  const drop = () => current !== dir && release(current);
  try {
    for (const part of parts) {
      const child = `${fdPath(current)}/${part}`;
      await mkdir(child).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
      const next = await pinDir(child, shown);
      drop();
      current = dir;
      if (next instanceof ToolError) return next;
      current = next;
    }
    return current;
  } catch (err) {
    drop();
    throw err;
  }
}

export interface OpenedForWrite extends OpenedFile {
  created: boolean;
}

/**
 * Opens an approved path for replacing its content (write_file), creating it
 * and its missing parent directories inside the workspace. The file is not
 * truncated here: the caller does that through the handle, once it is known to
 * be the right file.
 *
 * Contract: as `pinAndReopen`.
 */
export async function openForWrite(ctx: OpenContext, real: string, shown: string): Promise<OpenedForWrite | ToolError> {
  const refused = unsupported();
  if (refused) return refused;
  try {
    const opened = await pinAndReopen(ctx, real, shown, O_WRONLY, true);
    return opened instanceof ToolError ? opened : { ...opened, created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const homes = ctx.homes ?? (await bridleHomeForms(ctx.bridleHome));
  const parts = path.relative(ctx.workspace, real).split(path.sep);
  const name = parts.pop()!;
  const root = await pin(ctx.workspace, O_PATH | O_DIRECTORY);
  let parent: number | ToolError = root;
  try {
    parent = await pinDirs(root, parts, shown);
    if (parent instanceof ToolError) return parent;
    const where = confine(ctx.workspace, homes, parent, shown, ctx.protectGit === true);
    if (where instanceof ToolError) return where;
    try {
      const handle = await open(`${fdPath(parent)}/${name}`, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY);
      return { handle, size: 0, created: true };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      return new ToolError(FsCode.PATH_CHANGED, `"${shown}" appeared while it was being created. Nothing was written; try again.`);
    }
  } finally {
    if (typeof parent === 'number' && parent !== root) release(parent);
    release(root);
  }
}

/**
 * The entries of the directory at `dir`, an absolute real path, read through a
 * descriptor pinned without following a final symlink. Undefined when `dir` is
 * no longer that directory (an ancestor was swapped for a symlink): a walk
 * skips it, a caller naming it says so.
 *
 * Contract: errno errors (ENOENT, EACCES) are thrown, and so is the
 * `UNSUPPORTED_PLATFORM` `ToolError`.
 */
export async function readDirExactly(dir: string): Promise<Dirent[] | undefined> {
  const refused = unsupported();
  if (refused) throw refused;
  let pinned: number;
  try {
    pinned = await pin(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR' && (await lstat(dir)).isSymbolicLink()) return undefined;
    throw err;
  }
  try {
    if (readlinkSync(fdPath(pinned)) !== dir) return undefined;
    return await readdir(fdPath(pinned), { withFileTypes: true });
  } finally {
    release(pinned);
  }
}

/** Replaces the whole content of an opened file with `bytes`, written from offset 0. */
export async function replaceContent(handle: FileHandle, bytes: Uint8Array, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  await handle.truncate(0);
  for (let at = 0; at < bytes.length; ) {
    const { bytesWritten } = await handle.write(bytes, at, Math.min(1 << 20, bytes.length - at), at);
    at += bytesWritten;
  }
}
