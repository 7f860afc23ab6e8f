/**
 * A stored session and every subagent below it, read for a projection
 * (`bridle trace`, `bridle cost`): from a JSONL directory (each child's log
 * beside its parent's) or a Postgres store (each child a session of it).
 * Readers: no claim is taken; a log that does not verify is read as far as
 * it reads, and said so.
 */
import type { Entry } from '../log/entries.js';
import type { ComposedRow } from '../plugins/rows.js';
import { UsageError } from './errors.js';
import { bridleHome } from './home.js';
import { noSession } from '../runtime/logs/open.js';
import { readSessionLog } from '../runtime/logs/read.js';
import { looksLikePath, sessionOfRef } from '../runtime/stores.js';
import { verifyParsed } from './replay.js';

export interface SessionTree {
  entries: Entry[];
  /** Each subagent's entries by its session id. */
  children: Map<string, Entry[]>;
  /** Whether the session's own log verifies. */
  verifies: boolean;
}

/** Contract: reads only; a session that is not there is a `UsageError` naming where it looked. */
export async function readSessionTree(ref: string, rows: readonly ComposedRow[]): Promise<SessionTree> {
  const { store, id } = sessionOfRef(looksLikePath(ref) ? [] : rows, bridleHome(), ref);
  const parsed = await readSessionLog(store, id);
  if (!parsed) throw new UsageError(noSession(store, id).message);
  const v = verifyParsed(parsed);
  const entries = v.entries;
  const verifies = v.verdict.ok;
  // Each child is a session of the same store (a JSONL child's log beside its parent's).
  const read = async (child: string) => {
    const c = await readSessionLog(store, child).catch(() => undefined);
    return c ? verifyParsed(c).entries : undefined;
  };
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
