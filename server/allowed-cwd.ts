/**
 * Where a client may point a session: `session/create`'s `cwd` must be an
 * existing directory at or below one the server allows (its `--cwd`, and
 * each `--allow-cwd`). A path outside is refused before the filesystem is
 * asked anything about it, so the answers say nothing about what exists
 * there; a symlink inside that leads outside is refused too.
 */
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { Reason, type ErrorReason } from './protocol.js';

export type CwdVerdict = { ok: true; cwd: string } | { ok: false; reason: Extract<ErrorReason, `CWD_${string}`>; message: string };

const isWithin = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
};

/**
 * The roots, each as given (made absolute) and with its symlinks resolved, so
 * a client may name a directory either way. Contract: throws (ENOENT) for a
 * root that does not exist; the server checks its roots at start.
 */
export function allowedRoots(dirs: readonly string[]): string[] {
  return [...new Set(dirs.flatMap((d) => [resolve(d), realpathSync(d)]))];
}

/** Contract: reads only the filesystem under `roots`; never throws. */
export function checkCwd(requested: string, roots: readonly string[]): CwdVerdict {
  const shown = JSON.stringify(requested);
  const outside: CwdVerdict = { ok: false, reason: Reason.CWD_NOT_ALLOWED, message: `cwd ${shown} is not a directory this server allows (its --cwd or an --allow-cwd, or below)` };
  if (!isAbsolute(requested)) return { ok: false, reason: Reason.CWD_NOT_ALLOWED, message: `cwd ${shown} must be an absolute path` };
  const lexical = resolve(requested);
  if (!roots.some((r) => isWithin(r, lexical))) return outside;
  let real: string;
  try {
    real = realpathSync(lexical);
  } catch {
    return { ok: false, reason: Reason.CWD_NOT_FOUND, message: `cwd ${shown}: no such directory` };
  }
  if (!roots.some((r) => isWithin(r, real))) return outside;
  try {
    if (!statSync(real).isDirectory()) return { ok: false, reason: Reason.CWD_NOT_A_DIRECTORY, message: `cwd ${shown} is not a directory` };
  } catch {
    return { ok: false, reason: Reason.CWD_NOT_FOUND, message: `cwd ${shown}: no such directory` };
  }
  return { ok: true, cwd: real };
}
