/**
 * A stored session and every subagent below it, read for a projection
 * (`bridle trace`, `bridle cost`, `bridle replay --cost`, the hosts' usage
 * figures): from a JSONL directory (each child's log beside its parent's) or
 * a Postgres store (each child a session of it). Readers: no claim is taken;
 * a log that does not verify is read as far as it reads, and said so.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Entry } from '../log/entries.js';
import { redactUrl } from '../safety/redact.js';
import type { ComposedRow } from '../plugins/rows.js';
import { UsageError } from './errors.js';
import { bridleHome } from './home.js';
import { verifyFile, verifyLines } from './verify-log.js';
import { looksLikePath, targetOf, type StoreTarget } from './session-store.js';

export interface SessionTree {
  entries: Entry[];
  /** Each subagent's entries by its session id. */
  children: Map<string, Entry[]>;
  /** Whether the session's own log verifies. */
  verifies: boolean;
}

/** Reads one child's log by its session id; undefined when it is not there. */
export type ChildReader = (id: string) => Promise<Entry[] | undefined>;

/** Contract: reads only; the children of a session stored at `stored` are read where the store keeps them (beside its log, or in its Postgres store). */
export function childReaderOf(stored: StoreTarget): ChildReader {
  if (stored.kind === 'postgres') {
    return async (id) => {
      const child = await stored.store.tail(id);
      return child && child.length > 0 ? verifyLines(child).entries : undefined;
    };
  }
  const dir = dirname(stored.path);
  return async (id) => {
    const file = join(dir, `${id}.jsonl`);
    return existsSync(file) ? verifyFile(file).entries : undefined;
  };
}

/** Contract: reads only; every subagent below `entries` (breadth first, each once), by its session id. A child not found is left out. */
export async function childrenOf(entries: readonly Entry[], read: ChildReader): Promise<Map<string, Entry[]>> {
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
  return children;
}

/** Contract: reads only; a session that is not there is a `UsageError` naming where it looked. */
export async function readSessionTree(ref: string, rows: readonly ComposedRow[]): Promise<SessionTree> {
  const stored = targetOf(looksLikePath(ref) ? [] : rows, bridleHome(), ref);
  let entries: Entry[];
  let verifies: boolean;
  if (stored.kind === 'postgres') {
    const lines = await stored.store.tail(stored.id);
    if (!lines || lines.length === 0) throw new UsageError(`no session ${stored.id} at ${redactUrl(stored.store.url)}`);
    const v = verifyLines(lines);
    ({ entries } = v);
    verifies = v.verdict.ok;
  } else {
    if (!existsSync(stored.path)) throw new UsageError(`no session log at ${stored.path}`);
    const v = verifyFile(stored.path);
    ({ entries } = v);
    verifies = v.verdict.ok;
  }
  return { entries, children: await childrenOf(entries, childReaderOf(stored)), verifies };
}
