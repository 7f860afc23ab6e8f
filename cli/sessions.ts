/**
 * `bridle sessions [--store <url|dir>] [--json]`: the sessions of a store, one
 * line each — id, state, owner, last seq, workspace. The owner is the writer
 * that holds the session now (a JSONL lock whose socket a live process listens on; a
 * Postgres lease that has not expired, by the database's clock); the state
 * comes from the log's last turn or session marker: `running` (a turn open
 * and an owner), `interrupted` (a turn open and no owner: its writer died,
 * `resume` or a server asked for it repairs it), `ended` (`session/end` last:
 * closed at rest), else `idle`. A reader: takes no claim, changes nothing.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ListProblem, StoredSession } from '../ports/store.js';
import type { ComposedRow } from '../plugins/rows.js';
import { isDatabaseRef, storeOfFlag } from '../runtime/stores.js';
import { bridleHome } from './home.js';
import { UsageError } from './errors.js';
import { composeStoreRows } from './settings.js';
import { jsonLine, visible } from './visible.js';

export interface SessionsFlags {
  /** A postgres:// URL, or the JSONL directory (default `$BRIDLE_HOME/sessions`). */
  store?: string;
  json?: boolean;
}

export type SessionState = 'idle' | 'running' | 'interrupted' | 'ended';

export interface SessionLine {
  id: string;
  state: SessionState;
  /** The writer holding the session now, if any. */
  owner: { pid: number; host: string; since: string; epoch?: number; expires?: string } | null;
  lastSeq: number;
  cwd: string;
  model: string;
}

/** Contract: pure; the state a session is in from its last marker's kind and whether a writer holds it. */
export function stateOf(marker: string | undefined, owned: boolean): SessionState {
  if (marker === 'session/end') return 'ended';
  if (marker === 'turn/start') return owned ? 'running' : 'interrupted';
  return 'idle';
}

/** A store's listing as `bridle sessions` prints it: each session's state from its last marker and its owner. Contract: pure. */
export function sessionLines(sessions: readonly StoredSession[]): SessionLine[] {
  return sessions.map((r) => ({ id: r.id, state: stateOf(r.marker, r.owner !== undefined), owner: r.owner ?? null, lastSeq: r.lastSeq, cwd: r.cwd, model: r.model }));
}

/** The sessions of the store `ref` names (a `postgres://` URL or a JSONL directory), else of the product's `store` row. */
export async function listStore(ref: string | undefined, rows: readonly ComposedRow[] = []): Promise<{ where: string; sessions: SessionLine[]; problems: ListProblem[] }> {
  if (ref !== undefined && !isDatabaseRef(ref) && !existsSync(resolve(ref))) throw new UsageError(`--store: no such directory: ${ref}`);
  const store = storeOfFlag(ref, rows, bridleHome());
  const { sessions, problems } = await store.list();
  return { where: store.location, sessions: sessionLines(sessions), problems };
}

const ownerText = (o: SessionLine['owner']) => (o ? `pid ${o.pid} on ${o.host}${o.epoch !== undefined ? ` (epoch ${o.epoch})` : ''}` : '-');

/**
 * The store `bridle sessions` lists: `--store`, else the `store` row composed as `run` composes it (a `store:`
 * in `$BRIDLE_HOME/config.yaml`, a profile's), else `$BRIDLE_HOME/sessions`.
 */
async function listed(flags: SessionsFlags): Promise<Awaited<ReturnType<typeof listStore>>> {
  return listStore(flags.store, flags.store !== undefined ? [] : await composeStoreRows({}));
}

export async function sessionsCommand(flags: SessionsFlags, out: { write(s: string): unknown } = process.stdout): Promise<number> {
  const { where, sessions, problems } = await listed(flags);
  if (flags.json) {
    out.write(`${jsonLine({ store: where, sessions, ...(problems.length > 0 ? { problems } : {}) })}\n`);
    return 0;
  }
  for (const p of problems) process.stderr.write(`bridle: ${p.code}: ${visible(p.message)}\n`);
  const widths = [Math.max(0, ...sessions.map((s) => s.id.length)), 11, Math.max(1, ...sessions.map((s) => ownerText(s.owner).length))];
  for (const s of sessions) {
    out.write(`${visible(s.id.padEnd(widths[0]!))}  ${s.state.padEnd(widths[1]!)}  ${visible(ownerText(s.owner).padEnd(widths[2]!))}  seq ${String(s.lastSeq).padStart(5)}  ${visible(s.cwd)}\n`);
  }
  if (sessions.length === 0) process.stderr.write(`no sessions in ${where}\n`);
  return 0;
}
