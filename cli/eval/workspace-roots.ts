/**
 * Where a task's workspace may come from (ADR 0041). A task names its
 * workspace folder, and the whole folder is copied where the model reads it:
 * a task set someone else wrote must not be able to name `~/.ssh` or `/etc`.
 * So a workspace must lie, symlinks resolved, inside a root the user chose:
 * the task set's folder, and the roots named with `--workspace-root`, or by
 * default the git repository the task set is in (the shipped tasks use the
 * demo project beside them).
 */
import { cpSync, existsSync, realpathSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { UsageError } from '../errors.js';

const inside = (root: string, p: string) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);

/** The nearest folder at or above `dir` holding a `.git` (a repository's top, or a worktree's), or undefined. */
export function repositoryOf(dir: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, '.git'))) return at;
    if (dirname(at) === at) return undefined;
  }
}

/** Contract: throws a `UsageError` for a named root that does not exist; every root returned is real. */
export function workspaceRoots(taskSet: string, named: readonly string[] | undefined): string[] {
  const real = (p: string, what: string) => {
    try {
      return realpathSync(resolve(p));
    } catch {
      throw new UsageError(`${what}: no such folder: ${p}`);
    }
  };
  const set = real(taskSet, 'eval');
  const extra = named && named.length > 0 ? named.map((r) => real(r, '--workspace-root')) : [repositoryOf(set)].filter((r) => r !== undefined);
  return [...new Set([set, ...extra])];
}

/** `p`'s real path when it lies inside one of `roots`; else a `UsageError` naming it and the roots. */
export function confineToRoots(p: string, roots: readonly string[], where: string): string {
  const real = realpathSync(p);
  if (roots.some((r) => inside(r, real))) return real;
  const via = real === resolve(p) ? '' : ` (it resolves to ${real})`;
  throw new UsageError(
    `${where}: ${p}${via} is outside the folders a task may copy from (${roots.join(', ')}); if you trust it, name a folder holding it with --workspace-root DIR`,
  );
}

/**
 * Copies a task's folder into a run's workspace. Symbolic links are copied as
 * links, their targets verbatim: nothing is read through one, so a link to
 * `/etc` brings a link (which the file tools refuse to follow out of the
 * workspace), never `/etc`'s files.
 */
export function copyTaskFolder(from: string, to: string): void {
  cpSync(from, to, { recursive: true, dereference: false, verbatimSymlinks: true });
}
