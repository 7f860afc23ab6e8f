/** What an end-to-end test of the CLI needs around it: a throwaway BRIDLE_HOME and workspace, and the log a run wrote there. */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';

export interface CliWorld {
  root: string;
  /** `$BRIDLE_HOME` for the run; not created, so the CLI makes it. */
  home: string;
  /** The workspace, created empty. */
  ws: string;
}

export function tempWorld(prefix: string): CliWorld {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
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
