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
