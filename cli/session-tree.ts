/**
 * A stored session and every subagent below it, read for a projection
 * (`bridle trace`, `bridle cost`): from a JSONL directory (each child's log
 * beside its parent's) or a Postgres store (each child a session of it).
 * Readers: no claim is taken; a log that does not verify is read as far as
 * it reads, and said so.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Entry } from '../log/entries.js';
import { redactUrl } from '../safety/redact.js';
import type { ComposedRow } from '../plugins/rows.js';
import { UsageError } from './errors.js';
import { bridleHome } from './home.js';
import { verifyFile, verifyLines } from './replay.js';
import { looksLikePath, targetOf } from './session-store.js';

export interface SessionTree {
  entries: Entry[];
  /** Each subagent's entries by its session id. */
  children: Map<string, Entry[]>;
  /** Whether the session's own log verifies. */
  verifies: boolean;
}

/** Contract: reads only; a session that is not there is a `UsageError` naming where it looked. */
export async function readSessionTree(ref: string, rows: readonly ComposedRow[]): Promise<SessionTree> {
  const stored = targetOf(looksLikePath(ref) ? [] : rows, bridleHome(), ref);
  let entries: Entry[];
  let verifies: boolean;
  let read: (id: string) => Promise<Entry[] | undefined>;
  if (stored.kind === 'postgres') {
    const lines = await stored.store.tail(stored.id);
    if (!lines || lines.length === 0) throw new UsageError(`no session ${stored.id} at ${redactUrl(stored.store.url)}`);
    const v = verifyLines(lines);
    ({ entries } = v);
    verifies = v.verdict.ok;
    read = async (id) => {
      const child = await stored.store.tail(id);
      return child && child.length > 0 ? verifyLines(child).entries : undefined;
    };
  } else {
    if (!existsSync(stored.path)) throw new UsageError(`no session log at ${stored.path}`);
    const v = verifyFile(stored.path);
    ({ entries } = v);
    verifies = v.verdict.ok;
    const dir = dirname(stored.path);
    read = async (id) => {
      const file = join(dir, `${id}.jsonl`);
      return existsSync(file) ? verifyFile(file).entries : undefined;
    };
  }
  const children = new Map<string, Entry[]>();
  const todo = [...entries];
  while (todo.length > 0) {
    const e = todo.shift()!;
    if (e.kind !== 'subagent/start' || children.has(e.child)) continue;
    const child = await read(e.child);
    if (!child) continue;
    children.set(e.child, child);
    todo.push(...child);
  }
  return { entries, children, verifies };
}
