/**
 * Every `.git` below a workspace, found for the sandbox to bind read-only: a
 * vendored checkout or a package with its own repository is as dangerous to
 * leave writable as the workspace's own `.git` (a hook or `core.fsmonitor`
 * planted there runs at the user's next git command there; ADR 0041).
 *
 * The walk never follows a symbolic link (a link out of the workspace would
 * make it walk the host) and is bounded in directories read, so a huge tree
 * costs a bounded delay per command; what lies past the bound is not found,
 * and the result says so.
 */
import { readdirSync, realpathSync } from 'node:fs';
import path from 'node:path';

/** About 50 ms on a warm cache here; a workspace past it is a monorepo with many packages. */
export const GIT_WALK_MAX_DIRS = 20_000;

export interface GitEntries {
  /** Real paths of every `.git` (directory, file, or a link's target) inside the workspace. */
  found: string[];
  /** The bound was reached: directories past it were not read. */
  truncated: boolean;
}

const isGitName = (name: string) => name.toLowerCase() === '.git';
const inside = (parent: string, child: string) => child === parent || child.startsWith(`${parent}/`);

/** Contract: never throws; an unreadable directory is skipped. `workspace` is absolute and real. */
export function findGitEntries(workspace: string, maxDirs = GIT_WALK_MAX_DIRS): GitEntries {
  const found = new Set<string>();
  const queue = [workspace];
  let read = 0;
  while (queue.length > 0) {
    if (read >= maxDirs) return { found: [...found], truncated: true };
    const dir = queue.shift()!;
    read++;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const at = path.join(dir, e.name);
      if (isGitName(e.name)) {
        // A `.git` link makes its target the repository: protect the target when it lies in the workspace.
        const real = e.isSymbolicLink() ? realOrUndefined(at) : at;
        if (real !== undefined && inside(workspace, real)) found.add(real);
        // Bound as a whole: nothing below it needs finding.
        continue;
      }
      if (e.isDirectory()) queue.push(at);
    }
  }
  return { found: [...found], truncated: false };
}

function realOrUndefined(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}
