/** Where bridle keeps its logs: `$BRIDLE_HOME` (default `~/.bridle`), outside any workspace. */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/** `~/.bridle`, whatever `$BRIDLE_HOME` says: a session's sandbox hides both. */
export const defaultBridleHome = (): string => join(homedir(), '.bridle');

export function bridleHome(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.BRIDLE_HOME || defaultBridleHome());
}

export const sessionsDir = (home: string) => join(home, 'sessions');

/** A session named by id or by a path to its log. */
export function sessionPath(home: string, idOrPath: string): string {
  if (idOrPath.endsWith('.jsonl') || idOrPath.includes('/')) return isAbsolute(idOrPath) ? idOrPath : resolve(idOrPath);
  return join(sessionsDir(home), `${idOrPath}.jsonl`);
}

export const sessionExists = (path: string) => existsSync(path);
