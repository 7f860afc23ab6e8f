/** Path arithmetic the fs providers share: pure, on absolute normalized paths. */
import path from 'node:path';

/** True when `child` is `parent` or lies below it (both absolute, normalized). */
export function isInside(parent: string, child: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith(path.sep) ? parent : parent + path.sep;
  return child.startsWith(prefix);
}

/** A workspace-relative, `/`-separated rendering of an absolute path for tool output. */
export function displayPath(workspace: string, absolute: string): string {
  const rel = path.relative(workspace, absolute);
  if (rel === '') return '.';
  return rel.split(path.sep).join('/');
}

/** True for a path component git would take for a repository's `.git`: case-folded, since a case-insensitive mount makes `.GIT` one. */
export function isGitName(part: string): boolean {
  return part.toLowerCase() === '.git';
}

/**
 * The first `.git` (directory or file) at or below `workspace` on the way to
 * `absolute`, or undefined: a write there, or the creation of one, plants a
 * hook or `core.fsmonitor` that runs at the user's next git command (ADR 0041).
 */
export function gitComponent(workspace: string, absolute: string): string | undefined {
  if (!isInside(workspace, absolute)) return undefined;
  const parts = path.relative(workspace, absolute).split(path.sep);
  const at = parts.findIndex(isGitName);
  return at < 0 ? undefined : path.join(workspace, ...parts.slice(0, at + 1));
}
