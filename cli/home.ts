/** Where bridle keeps its logs: `$BRIDLE_HOME` (default `~/.bridle`), outside any workspace. */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

export function bridleHome(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.BRIDLE_HOME || join(homedir(), '.bridle'));
}

export const sessionsDir = (home: string) => join(home, 'sessions');

/** A session named by id or by a path to its log. */
export function sessionPath(home: string, idOrPath: string): string {
  if (idOrPath.endsWith('.jsonl') || idOrPath.includes('/')) return isAbsolute(idOrPath) ? idOrPath : resolve(idOrPath);
  return join(sessionsDir(home), `${idOrPath}.jsonl`);
}

export const sessionExists = (path: string) => existsSync(path);
