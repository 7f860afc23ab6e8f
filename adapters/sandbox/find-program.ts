/**
 * Finds a program the sandbox itself runs (bwrap, and its helpers) at a place
 * no confined command can write to. `npx` and npm scripts put
 * `<project>/node_modules/.bin` first on PATH, inside the writable workspace:
 * a lookup there would let one command plant a `bwrap` that runs every later
 * command unconfined. So only absolute PATH entries count, and neither the
 * entry nor the program (symlinks resolved) may lie inside the workspace.
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

export type Found = { path: string } | { missing: string };

const inside = (parent: string, child: string) => child === parent || child.startsWith(parent.endsWith('/') ? parent : `${parent}/`);

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Contract: never throws; `file` when it is an absolute executable whose real
 * path lies outside `workspace`, or why it is not. The name stays as spelled:
 * `sh` linked to bash must still start as `sh` (POSIX mode, no `$BASH_ENV`).
 */
export function checkProgram(file: string, workspace: string, what: string): Found {
  if (!path.isAbsolute(file)) return { missing: `${what} is ${file}, which is not an absolute path` };
  if (!isExecutableFile(file)) return { missing: `${what} is ${file}, which is not an executable file` };
  const ws = real(workspace);
  if (inside(ws, real(file)) || inside(ws, real(path.dirname(file)))) return { missing: `${what} is ${file}, inside the workspace, where a command could replace it` };
  return { path: path.normalize(file) };
}

/**
 * `name` on `env.PATH`, skipping relative entries and entries inside
 * `workspace`. Contract: never throws.
 */
export function findProgram(name: string, env: NodeJS.ProcessEnv, workspace: string): Found {
  const ws = real(workspace);
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir === '' || !path.isAbsolute(dir) || inside(ws, real(dir))) continue;
    const candidate = path.join(dir, name);
    if (!isExecutableFile(candidate)) continue;
    const found = checkProgram(candidate, ws, name);
    if ('path' in found) return found;
  }
  return { missing: `${name} is not on PATH (outside the workspace)` };
}
