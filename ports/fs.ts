/**
 * The file system seam: every file tool reads, writes, lists and walks only
 * through it, so pointing it elsewhere (a remote sandbox, an editor's own
 * buffers) moves every file tool at once. Providers: `adapters/fs/` (local,
 * memory, acp-client).
 *
 * Paths. A consumer hands a path as the model wrote it (relative to the
 * workspace root, or absolute inside it) to `realpath` once and gets back an
 * `FsPath` the provider has confined; every other method takes an `FsPath`,
 * never a string, so nothing is touched that the provider did not check. A
 * provider may check again when it uses one (the local one does: the world
 * may have changed in between).
 *
 * Failures. Every method rejects with a `ToolError` for a refusal, or with an
 * `FsIoError` (a `ToolError` too) when the storage failed at what it was asked,
 * with one of the codes of `FsCode` below, which the tools show the model.
 * Anything else it rejects with is a bug.
 */
import { codes, type CodeOf } from '../log/codes.js';
import { ToolError } from './tool-error.js';

/** The fs seam's refusals and storage failures: the codes a file tool's result carries when the seam said no. */
export const FsCode = codes({
  INVALID_PATH: 'The path is empty, holds a NUL byte, is too long or loops through links (a refusal or the storage\'s).',
  NOT_FOUND: 'No such file or directory (or it went away meanwhile).',
  OUTSIDE_WORKSPACE: 'The path, or where its links lead, is outside the workspace.',
  INSIDE_BRIDLE_HOME: 'The path is inside bridle\'s own home, which tools may not touch.',
  PROTECTED_PATH: 'A write inside a path the tools may read but not write (`.git` unless allowed).',
  IS_A_DIRECTORY: 'A directory where a file was asked for.',
  NOT_A_DIRECTORY: 'A file where a directory (or a parent) should be.',
  NOT_A_FILE: 'Not a regular file (a FIFO, socket or device).',
  HARD_LINKED: 'A file with more than one hard link: writing it would change the other names too.',
  PATH_CHANGED: 'The path changed while it was being opened or listed; nothing was touched.',
  UNSUPPORTED_PLATFORM: 'This platform cannot open files race-free (no /proc/self/fd).',
  PERMISSION_DENIED: 'The storage refused access.',
  NO_SPACE: 'No space left on the device.',
  CLIENT_FAILED: 'The editor the files live in (over ACP) failed the request or went away.',
});
export type FsCode = CodeOf<typeof FsCode>;

/** What an entry is; a symbolic link is never followed where `symlink` can be said. */
export type EntryKind = 'file' | 'directory' | 'symlink' | 'other';

/** A path the provider has confined: from `realpath`, `root` or a walk. */
export interface FsPath {
  /** Where it is, relative to the workspace root, `/`-separated, `.` for the root: how tools print it. */
  readonly display: string;
  /** How the caller named it, quoted in refusals (`"src/x" is a directory`). */
  readonly shown: string;
  /** The provider's own locator (local: the absolute real path). Consumers never read it. */
  readonly at: string;
}

export interface PathIntent {
  /** Refuse with `NOT_FOUND` when nothing is there. */
  mustExist?: boolean;
  /** The caller will write it: refuse a directory (`IS_A_DIRECTORY`) and a protected path (`PROTECTED_PATH`). */
  forWrite?: boolean;
}

export interface FileStat {
  /** Symbolic links followed: `file`, `directory` or `other` (a FIFO, socket or device). */
  kind: EntryKind;
  size: number;
}

export interface DirEntry {
  name: string;
  /** Not followed: a link is `symlink`. */
  kind: EntryKind;
}

/** A leaf met on a walk: a regular file, or a symbolic link (named, never followed). */
export interface WalkEntry extends FsPath {
  kind: 'file' | 'symlink';
}

export interface WalkOptions {
  /** Directory names never entered, at any depth below the walk's start. */
  skipDirs?: readonly string[];
  /** The walk ends early, quietly, once it fires. */
  signal?: AbortSignal;
}

/** A regular file opened for reading, read by position (no shared offset: a remote file reads the same way). */
export interface FileHandle {
  /** Its size when it was opened. */
  readonly size: number;
  /** Up to `length` bytes from `position`: fewer only at the end of the file, none past it. */
  read(position: number, length: number): Promise<Uint8Array>;
  /** Contract: idempotent. */
  close(): Promise<void>;
}

export interface UpdateOptions {
  /** A file holding more than this is not read: the update answers `too-large`. */
  maxBytes: number;
  signal?: AbortSignal;
}

/** `replaced`: `change` returned bytes and they were written; `unchanged`: it returned none; `too-large`: it never ran. */
export type UpdateOutcome = 'replaced' | 'unchanged' | 'too-large';

export interface FileSystem {
  readonly id: string;
  /** The workspace root. */
  readonly root: FsPath;
  /**
   * Where `path` (as the model wrote it) really is, symbolic links followed,
   * refused unless that is inside the workspace and outside bridle's home.
   * A path that does not exist yet is fine unless `mustExist`.
   */
  realpath(path: string, intent?: PathIntent): Promise<FsPath>;
  /** What is there now, symbolic links followed. */
  stat(path: FsPath): Promise<FileStat>;
  /** Opens a regular file for reading; anything else is refused (`IS_A_DIRECTORY`, `NOT_A_FILE`) without being opened. */
  open(path: FsPath): Promise<FileHandle>;
  /**
   * Replaces the whole content of a regular file with `bytes`, creating it
   * and its missing parent directories. A file with other hard links is
   * refused (`HARD_LINKED`): writing it would change the other names too.
   */
  write(path: FsPath, bytes: Uint8Array, signal?: AbortSignal): Promise<{ created: boolean }>;
  /**
   * Read-and-replace in one opening: reads the whole regular file, hands its
   * bytes to `change`, and writes back what `change` returns (nothing when it
   * returns undefined). Refuses what `write` refuses, and a missing file.
   */
  update(path: FsPath, options: UpdateOptions, change: (current: Uint8Array) => Uint8Array | undefined): Promise<UpdateOutcome>;
  /** The entries of a directory, in no promised order. */
  list(path: FsPath): Promise<DirEntry[]>;
  /**
   * The files and symbolic links below a directory, depth first, each
   * directory's entries in code-point order, never following a link and
   * never entering bridle's home. Unreadable directories and FIFOs, sockets
   * and devices are left out. Stopping the iteration stops the walk.
   */
  walk(path: FsPath, options?: WalkOptions): AsyncIterable<WalkEntry>;
}

/** Code-point order, the order `walk` visits names in: it does not depend on the host's locale. */
export function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The storage failed at what it was asked (as opposed to a refusal); `code` says how. */
export class FsIoError extends ToolError {
  constructor(code: string, message: string) {
    super(code, message);
    this.name = 'FsIoError';
  }
}

/**
 * Reads `handle` from its start to its end; undefined when it holds more than
 * `max` bytes (one byte past its opened size is asked for, so a file that
 * grew since is noticed). Contract: rejects only for I/O errors or an
 * aborted `signal`.
 */
export async function readAtMost(handle: FileHandle, max: number, signal?: AbortSignal): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let want = Math.min(max, handle.size) + 1;
  for (;;) {
    signal?.throwIfAborted();
    const chunk = await handle.read(total, Math.min(want, max + 1 - total));
    if (chunk.length === 0) break;
    chunks.push(chunk);
    total += chunk.length;
    if (total > max) return undefined;
    want = 64 * 1024;
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
