/** A deterministic walk of a directory tree on the local disk, for the file system's `walk`. */
import type { Dirent } from 'node:fs';
import path from 'node:path';
import { byCodePoint } from '../../ports/fs.js';
import { ToolError } from '../../ports/tool-error.js';
import { readDirExactly } from './local-open.js';
import { isInside } from '../../safety/paths.js';

export interface WalkOptions {
  /** Directory names never entered, at any depth below the root. */
  skipDirs: ReadonlySet<string>;
  /** Absolute directories never entered (bridle's home, when it lies inside the workspace: give its spelled and its real path). */
  excludeRoots: readonly string[];
  signal?: AbortSignal;
}

export interface Walked {
  /** Absolute. */
  path: string;
  kind: 'file' | 'symlink';
}

/**
 * Yields the regular files and symbolic links below `root` (`root` must be a
 * real path), never following a link (it could lead outside the workspace)
 * and skipping unreadable directories and any that stopped being what was
 * listed (an ancestor swapped for a symlink mid-walk). FIFOs, sockets and
 * devices are never yielded. Each directory's files come in name order, then
 * its subdirectories are walked in name order: a capped walk is reproducible.
 *
 * Contract: ends quietly when `signal` fires; throws only the
 * `UNSUPPORTED_PLATFORM` `ToolError`.
 */
export async function* walkFiles(root: string, options: WalkOptions): AsyncGenerator<Walked> {
  const pending = [root];
  while (pending.length > 0) {
    if (options.signal?.aborted) return;
    const dir = pending.pop()!;
    let entries: Dirent[] | undefined;
    try {
      entries = await readDirExactly(dir);
    } catch (err) {
      if (err instanceof ToolError) throw err;
      continue;
    }
    if (entries === undefined) continue;
    entries.sort((a, b) => byCodePoint(a.name, b.name));
    const subdirs: string[] = [];
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (options.skipDirs.has(entry.name)) continue;
        if (options.excludeRoots.some((excluded) => isInside(excluded, full))) continue;
        subdirs.push(full);
      } else if (entry.isFile()) {
        yield { path: full, kind: 'file' };
      } else if (entry.isSymbolicLink()) {
        yield { path: full, kind: 'symlink' };
      }
    }
    // Reversed onto the stack so directories are visited in name order.
    pending.push(...subdirs.reverse());
  }
}
