/** What an end-to-end test of the CLI needs around it: a throwaway BRIDLE_HOME and workspace, and the log a run wrote there. */
import { mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { tempDir } from './temp.js';

export interface CliWorld {
  root: string;
  /** `$BRIDLE_HOME` for the run; not created, so the CLI makes it. */
  home: string;
  /** The workspace, created empty. */
  ws: string;
}

export function tempWorld(prefix: string): CliWorld {
  const root = realpathSync(tempDir(prefix));
  const world = { root, home: join(root, 'home'), ws: join(root, 'ws') };
  mkdirSync(world.ws);
  return world;
}

/** The entries of the first session log under `home` (tests that run one session have exactly one). */
export function readSessionLog(home: string): Entry[] {
  const dir = join(home, 'sessions');
  const [first] = readdirSync(dir).sort();
  return parseLog(readFileSync(join(dir, first!), 'utf8')).entries;
}

/** The session logs under `home` by session id, shortest id first (a parent's before its children's). */
export function sessionLogs(home: string): Map<string, Entry[]> {
  const dir = join(home, 'sessions');
  return new Map(readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort((a, b) => a.length - b.length).map((f) => [f.replace(/\.jsonl$/, ''), parseLog(readFileSync(join(dir, f), 'utf8')).entries]));
}

export interface NotesWorld extends CliWorld {
  /** Writes `body` as JSON to `name` beside the workspace (a script, a patch) and returns its path. */
  file(name: string, body: object): string;
  /** The session logs the runs left, as `sessionLogs`. */
  logs(): Map<string, Entry[]>;
}

/** A CLI world whose workspace holds notes.txt ("the answer is 42"), for scripted runs that read it. */
export function notesWorld(prefix: string): NotesWorld {
  const w = tempWorld(prefix);
  writeFileSync(join(w.ws, 'notes.txt'), 'the answer is 42\n');
  const file = (name: string, body: object) => {
    const p = join(w.root, name);
    writeFileSync(p, JSON.stringify(body));
    return p;
  };
  return { ...w, file, logs: () => sessionLogs(w.home) };
}
