/**
 * A stored session and every subagent below it, read for a projection
 * (`bridle trace`, `bridle cost`, `bridle replay --cost`, the hosts' usage
 * figures): from a JSONL directory (each child's log beside its parent's) or
 * a Postgres store (each child a session of it). Readers: no claim is taken;
 * a log that does not verify is read as far as it reads, and said so.
 */
import type { Entry } from '../log/entries.js';
import type { ComposedRow } from '../plugins/rows.js';
import { UsageError } from './errors.js';
import { bridleHome } from './home.js';
import type { SessionStore } from '../ports/store.js';
import { noSession } from '../runtime/logs/open.js';
import { readSessionLog } from '../runtime/logs/read.js';
import { looksLikePath, sessionOfRef } from '../runtime/stores.js';
import { verifyParsed } from './verify-log.js';

export interface SessionTree {
  entries: Entry[];
  /** Each subagent's entries by its session id. */
  children: Map<string, Entry[]>;
  /** Whether the session's own log verifies. */
  verifies: boolean;
}

/** Reads one child's log by its session id; undefined when it is not there. */
export type ChildReader = (id: string) => Promise<Entry[] | undefined>;

/** Contract: reads only; a child is a session of the same store (a JSONL child's log beside its parent's). */
export function childReaderOf(store: SessionStore): ChildReader {
  return async (child) => {
    const c = await readSessionLog(store, child).catch(() => undefined);
    return c ? verifyParsed(c).entries : undefined;
  };
}

/** Contract: reads only; every subagent below `entries` (breadth first, each once), by its session id. A child not found is left out. */
export async function childrenOf(entries: readonly Entry[], read: ChildReader): Promise<Map<string, Entry[]>> {
  const children = new Map<string, Entry[]>();
  // A queue read by index: `shift()` of an array as long as a 100,000-entry log copies what is left each time,
  // which made this walk quadratic (5 of `bridle trace`'s 19 s on such a log); and a child's entries pushed one
  // by one, since spreading more than about 120,000 of them into a push overflows the stack.
  const todo: Entry[] = [...entries];
  for (let next = 0; next < todo.length; next++) {
    const e = todo[next]!;
    if (e.kind !== 'subagent/start' || children.has(e.child)) continue;
    const child = await read(e.child);
    if (!child) continue;
    children.set(e.child, child);
    for (const c of child) todo.push(c);
  }
  return children;
}

/** Contract: reads only; a session that is not there is a `UsageError` naming where it looked. */
export async function readSessionTree(ref: string, rows: readonly ComposedRow[]): Promise<SessionTree> {
  const { store, id } = sessionOfRef(looksLikePath(ref) ? [] : rows, bridleHome(), ref);
  const parsed = await readSessionLog(store, id);
  if (!parsed) throw new UsageError(noSession(store, id).message);
  const v = verifyParsed(parsed);
  return { entries: v.entries, children: await childrenOf(v.entries, childReaderOf(store)), verifies: v.verdict.ok };
}
