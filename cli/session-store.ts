/**
 * Where a session command's session lives: the product's `store` row (a
 * `--store` flag is sugar over it), or a session named whole as
 * `postgres://host/db#<id>` — the form the Postgres store gives as a log's
 * location, so a line that names one can be pasted back. A JSONL session is
 * a file (`<dir>/<id>.jsonl`, or a path); a Postgres one an id in a store
 * opened here (ADR 0025).
 */
import type { ComposedRow } from '../plugins/rows.js';
import type { Entry } from '../log/entries.js';
import { LogCorruptError } from '../log/errors.js';
import { LogParser } from '../log/parse.js';
import type { Violation } from '../log/verify.js';
import { createPostgresSessionStore, type PostgresSessionStore } from '../adapters/store/postgres.js';
import { isPostgresUrl } from '../adapters/store/postgres-pool.js';
import { sessionPathIn, sessionsDir } from './home.js';

export type StoreTarget = { kind: 'jsonl'; path: string } | { kind: 'postgres'; store: PostgresSessionStore; id: string };

export const storeRowOf = (rows: readonly ComposedRow[]): ComposedRow | undefined => rows.find((r) => r.id === 'store');

/** A log named by its file (`./x.jsonl`, `/a/b`), not by a session id of the store: a reader opens that file, whatever store is configured. */
export const looksLikePath = (ref: string): boolean => !isPostgresUrl(ref) && (ref.includes('/') || ref.endsWith('.jsonl'));

/** The product's Postgres store, when its `store` row is one. */
export function postgresStoreOf(rows: readonly ComposedRow[]): PostgresSessionStore | undefined {
  const row = storeRowOf(rows);
  return row?.use === 'postgres' ? createPostgresSessionStore(row.config as { url: string }) : undefined;
}

/** Contract: pure but for opening a store object (which connects only when used); never throws for a well-formed product. */
export function targetOf(rows: readonly ComposedRow[], home: string, ref: string): StoreTarget {
  const row = storeRowOf(rows);
  if (isPostgresUrl(ref) && ref.includes('#')) {
    const at = ref.indexOf('#');
    const config = row?.use === 'postgres' ? { ...(row.config as object), url: ref.slice(0, at) } : { url: ref.slice(0, at) };
    return { kind: 'postgres', store: createPostgresSessionStore(config), id: decodeURIComponent(ref.slice(at + 1)) };
  }
  const pg = postgresStoreOf(rows);
  if (pg) return { kind: 'postgres', store: pg, id: ref };
  const dir = row?.use === 'jsonl' ? (row.config as { dir?: string } | undefined)?.dir : undefined;
  return { kind: 'jsonl', path: sessionPathIn(dir ?? sessionsDir(home), ref) };
}

/** A stored session's lines as entries; a bad line is a violation naming it, with the entries before it. */
export function parseStoredLines(lines: readonly string[]): { ok: true; entries: Entry[] } | { ok: false; violations: Violation[]; entries: Entry[] } {
  const parser = new LogParser();
  try {
    for (const l of lines) parser.line(l);
    return { ok: true, entries: parser.end().entries };
  } catch (err) {
    if (!(err instanceof LogCorruptError)) throw err;
    const v: Violation = { violation: err.violation, seq: err.seq ?? null, message: err.message };
    if (err.line !== undefined) v.line = err.line;
    return { ok: false, violations: [v], entries: parser.entries };
  }
}
