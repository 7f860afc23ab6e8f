/** The search tools' walk: what they skip, how many entries they take, in what order they show them. */
import type { FileSystem, FsPath, WalkEntry } from '../ports/fs.js';
import { byCodePoint } from '../ports/fs.js';

/** Directories that are huge and rarely what a search means. */
export const SKIPPED_DIRS: readonly string[] = ['node_modules', '.git'];

export interface CollectOptions {
  skipDirs: readonly string[];
  /** Stop once this many entries have been taken. */
  maxEntries: number;
  /** Also take symbolic links (named, never followed). Regular files are always taken. */
  includeSymlinks: boolean;
  signal?: AbortSignal;
}

export interface Collected {
  /** Sorted by their display path, by code point. */
  entries: WalkEntry[];
  /** True when more were there than `maxEntries`, or the signal stopped the walk. */
  stopped: boolean;
}

/** Contract: rejects only with what the fs seam's walk rejects with (`UNSUPPORTED_PLATFORM`). */
export async function collectWalk(fs: FileSystem, from: FsPath, o: CollectOptions): Promise<Collected> {
  const entries: WalkEntry[] = [];
  const sorted = (stopped: boolean): Collected => ({ entries: entries.sort((a, b) => byCodePoint(a.display, b.display)), stopped });
  for await (const entry of fs.walk(from, { skipDirs: o.skipDirs, ...(o.signal ? { signal: o.signal } : {}) })) {
    if (entry.kind === 'symlink' && !o.includeSymlinks) continue;
    if (entries.length >= o.maxEntries) return sorted(true);
    entries.push(entry);
  }
  return sorted(o.signal?.aborted ?? false);
}
