/** A bounded, deterministic walk of a directory tree for glob and grep. */
import type { Dirent } from 'node:fs';
import path from 'node:path';
import { readDirExactly } from './open-in-workspace.js';
import { byCodePoint } from './text.js';
import { ToolError } from '../ports/tools.js';
import { isInside } from './workspace.js';

/** Directories that are huge and rarely what a search means. */
export const SKIPPED_DIRS: readonly string[] = ['node_modules', '.git'];

export interface WalkOptions {
  /** Directory names never entered, at any depth below the root. */
  skipDirs: ReadonlySet<string>;
  /** Absolute directories never entered (bridle's home, when it lies inside the workspace: give its spelled and its real path). */
  excludeRoots: readonly string[];
  /** Stop after this many entries have been collected. */
  maxEntries: number;
  /** Also collect symbolic links (never followed). Regular files are always collected. */
  includeSymlinks: boolean;
  signal?: AbortSignal;
}

export interface WalkResult {
  /** Absolute paths, sorted by code point. */
  paths: string[];
  /** True when `maxEntries` or the signal stopped the walk early. */
  stopped: boolean;
}

/**
 * Collects the regular files below `root` (`root` must be a real path), never
 * following symlinks (a link could lead outside the workspace) and skipping
 * unreadable directories and any that stopped being what was listed (an
 * ancestor swapped for a symlink mid-walk). FIFOs, sockets and devices are
 * never collected.
 */
export async function walkFiles(root: string, options: WalkOptions): Promise<WalkResult> {
  const paths: string[] = [];
  const pending = [root];
  while (pending.length > 0) {
    if (options.signal?.aborted || paths.length >= options.maxEntries) {
      return { paths: paths.sort(byCodePoint), stopped: true };
    }
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
      } else if (entry.isFile() || (options.includeSymlinks && entry.isSymbolicLink())) {
        if (paths.length >= options.maxEntries) break;
        paths.push(full);
      }
    }
    // Reversed onto the stack so directories are visited in name order: a capped walk is reproducible.
    pending.push(...subdirs.reverse());
  }
  return { paths: paths.sort(byCodePoint), stopped: false };
}
