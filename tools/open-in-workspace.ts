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
import type { Dirent } from 'node:fs';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { ToolError, type ToolContext } from './types.js';
import { bridleHomeForms, isInside } from './workspace.js';

/** Linux's `O_PATH` (the generic value, shared by x86 and arm); `fs.constants` does not carry it. */
const O_PATH = 0o10000000;
const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NOCTTY } = constants;

type Ctx = Pick<ToolContext, 'workspace' | 'bridleHome'>;

const fdPath = (handle: FileHandle) => `/proc/self/fd/${handle.fd}`;

function unsupported(): ToolError | undefined {
  if (process.platform === 'linux') return undefined;
  return new ToolError('UNSUPPORTED_PLATFORM', `The file tools open files race-free through /proc/self/fd, which ${process.platform} lacks.`);
}

async function closeQuietly(handle: FileHandle | undefined): Promise<void> {
  await handle?.close().catch(() => {});
}

/** Where a pinned descriptor really is, or a refusal when that is outside the workspace or inside bridle's home. */
async function confine(ctx: Ctx, pinned: FileHandle, shown: string): Promise<string | ToolError> {
  const real = await readlink(fdPath(pinned));
  const changed = (where: string) =>
    new ToolError('PATH_CHANGED', `"${shown}" changed while it was being opened: it now leads to ${real}, ${where}. Nothing was touched.`);
  for (const home of await bridleHomeForms(ctx.bridleHome)) if (isInside(home, real)) return changed("inside bridle's own home");
  if (!isInside(ctx.workspace, real)) return changed('outside the workspace');
  return real;
}

function refuseKind(stats: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }, shown: string): ToolError | undefined {
  if (stats.isFile()) return undefined;
  if (stats.isDirectory()) return new ToolError('IS_A_DIRECTORY', `"${shown}" is a directory, not a file.`);
  if (stats.isSymbolicLink()) {
    return new ToolError('PATH_CHANGED', `"${shown}" became a symbolic link while it was being opened. Nothing was touched.`);
  }
  return new ToolError('NOT_A_FILE', `"${shown}" is not a regular file (a FIFO, socket or device); the file tools read and write regular files only.`);
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
 * (ENOENT, EACCES) are thrown for the caller's `fsFailure`.
 */
async function pinAndReopen(ctx: Ctx, real: string, shown: string, flags: number, single: boolean): Promise<OpenedFile | ToolError> {
  const pinned = await open(real, O_PATH | O_NOFOLLOW);
  try {
    const stats = await pinned.stat();
    const refused = refuseKind(stats, shown);
    if (refused) return refused;
    const where = await confine(ctx, pinned, shown);
    if (where instanceof ToolError) return where;
    if (single && stats.nlink > 1) {
      return new ToolError(
        'HARD_LINKED',
        `"${shown}" has ${stats.nlink} hard links; writing it would change the other names too, which may lie outside the workspace. Nothing was written.`,
      );
    }
    const handle = await open(fdPath(pinned), flags | O_NOCTTY);
    return { handle, size: stats.size };
  } finally {
    await closeQuietly(pinned);
  }
}

/** Opens an approved path for reading. Contract: as `pinAndReopen`. */
export async function openForRead(ctx: Ctx, real: string, shown: string): Promise<OpenedFile | ToolError> {
  return unsupported() ?? pinAndReopen(ctx, real, shown, O_RDONLY, false);
}

/** Opens an approved, existing path for reading and writing in place (edit_file). Contract: as `pinAndReopen`. */
export async function openForUpdate(ctx: Ctx, real: string, shown: string): Promise<OpenedFile | ToolError> {
  return unsupported() ?? pinAndReopen(ctx, real, shown, O_RDWR, true);
}

/** The directory `child` names, pinned without following a symlink; a symlink standing there means the path changed. */
async function pinDir(child: string, shown: string): Promise<FileHandle | ToolError> {
  try {
    return await open(child, O_PATH | O_DIRECTORY | O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR' && (await lstat(child)).isSymbolicLink()) {
      return new ToolError('PATH_CHANGED', `A directory on the way to "${shown}" became a symbolic link while it was being opened. Nothing was written.`);
    }
    throw err;
  }
}

/** Pins the directory chain `parts` below the pinned `dir`, creating missing ones. The caller closes what it gets unless it is `dir`. */
async function pinDirs(dir: FileHandle, parts: readonly string[], shown: string): Promise<FileHandle | ToolError> {
  let current = dir;
  const release = () => (current === dir ? Promise.resolve() : closeQuietly(current));
  try {
    for (const part of parts) {
      const child = `${fdPath(current)}/${part}`;
      await mkdir(child).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
      const next = await pinDir(child, shown);
      await release();
      if (next instanceof ToolError) return next;
      current = next;
    }
    return current;
  } catch (err) {
    await release();
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
export async function openForWrite(ctx: Ctx, real: string, shown: string): Promise<OpenedForWrite | ToolError> {
  const refused = unsupported();
  if (refused) return refused;
  try {
    const opened = await pinAndReopen(ctx, real, shown, O_WRONLY, true);
    return opened instanceof ToolError ? opened : { ...opened, created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const parts = path.relative(ctx.workspace, real).split(path.sep);
  const name = parts.pop()!;
  const root = await open(ctx.workspace, O_PATH | O_DIRECTORY);
  let parent: FileHandle | ToolError | undefined;
  try {
    parent = await pinDirs(root, parts, shown);
    if (parent instanceof ToolError) return parent;
    const where = await confine(ctx, parent, shown);
    if (where instanceof ToolError) return where;
    let handle: FileHandle;
    try {
      handle = await open(`${fdPath(parent)}/${name}`, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      return new ToolError('PATH_CHANGED', `"${shown}" appeared while it was being created. Nothing was written; try again.`);
    }
    return { handle, size: 0, created: true };
  } finally {
    if (parent !== undefined && !(parent instanceof ToolError) && parent !== root) await closeQuietly(parent);
    await closeQuietly(root);
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
  let pinned: FileHandle;
  try {
    pinned = await open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR' && (await lstat(dir)).isSymbolicLink()) return undefined;
    throw err;
  }
  try {
    if ((await readlink(fdPath(pinned))) !== dir) return undefined;
    return await readdir(fdPath(pinned), { withFileTypes: true });
  } finally {
    await closeQuietly(pinned);
  }
}

/**
 * Reads up to `max` bytes from the start of an opened file (positioned reads:
 * the handle's offset does not move). Undefined when the file holds more.
 */
export async function readAtMost(handle: FileHandle, max: number, signal?: AbortSignal): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    signal?.throwIfAborted();
    const chunk = Buffer.alloc(Math.min(1 << 20, max + 1 - total));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, total);
    if (bytesRead === 0) return Buffer.concat(chunks, total);
    chunks.push(bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead));
    total += bytesRead;
    if (total > max) return undefined;
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
