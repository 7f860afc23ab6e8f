/** Where bridle keeps its logs: `$BRIDLE_HOME` (default `~/.bridle`), outside any workspace. */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { LogAccessError } from '../log/errors.js';
import { UsageError } from './errors.js';

/** `~/.bridle`, whatever `$BRIDLE_HOME` says: a session's sandbox hides both. */
export const defaultBridleHome = (): string => join(homedir(), '.bridle');

export function bridleHome(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.BRIDLE_HOME || defaultBridleHome());
}

export const sessionsDir = (home: string) => join(home, 'sessions');

/** A session named by id or by a path to its log. */
export function sessionPath(home: string, idOrPath: string): string {
  return sessionPathIn(sessionsDir(home), idOrPath);
}

/** A session named by id (its log in `dir`) or by a path to its log. */
export function sessionPathIn(dir: string, idOrPath: string): string {
  if (idOrPath.endsWith('.jsonl') || idOrPath.includes('/')) return isAbsolute(idOrPath) ? idOrPath : resolve(idOrPath);
  return join(dir, `${idOrPath}.jsonl`);
}

export const sessionExists = (path: string) => existsSync(path);

/**
 * A log that cannot be opened as one (a directory or a FIFO named as the log,
 * a sessions directory bridle may not write) is the caller's to fix: one line
 * with its stable code, exit 2. Anything else is rethrown as it is.
 */
export function logAccessAsUsage(err: unknown): never {
  if (err instanceof LogAccessError) throw new UsageError(`${err.code}: ${err.message}`);
  throw err;
}
