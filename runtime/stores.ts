/**
 * The composition root's store half: a store reference becomes a store here and nowhere else. A reference is
 * a `postgres://…` URL (a database), a directory (JSONL logs), a log's path (`./x.jsonl`, `/a/b`: the JSONL
 * store of its directory), `postgres://host/db#<id>` (a session named whole, as the Postgres store prints a
 * log's location), or a session id of the product's `store` row. Hosts (the CLI, the server) get a
 * `SessionStore` and an id, and do everything else through the port (`runtime/logs/`).
 */
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { jsonlStore } from '../adapters/store/jsonl.js';
import { readStoredLog } from '../adapters/store/jsonl-read.js';
import { createMemorySessionStore } from '../adapters/store/memory.js';
import { createPostgresSessionStore } from '../adapters/store/postgres.js';
import { isPostgresUrl } from '../adapters/store/postgres-pool.js';
import { createPostgresRelay, type PostgresRelayOptions } from '../adapters/store/postgres-relay.js';
import type { SessionRelay } from '../ports/relay.js';
import type { SessionStore, StoredLog } from '../ports/store.js';
import type { ComposedRow } from '../plugins/rows.js';

/** A session as a host names it: the store that holds it and its id there. */
export interface SessionRef {
  store: SessionStore;
  id: string;
}

/** Whether `ref` names a database rather than a directory or a file. Contract: pure. */
export const isDatabaseRef = (ref: string): boolean => isPostgresUrl(ref);

/** A log named by its file (`./x.jsonl`, `/a/b`), not by a session id of the store: a reader opens that file, whatever store is configured. */
export const looksLikePath = (ref: string): boolean => !isDatabaseRef(ref) && (ref.includes('/') || ref.endsWith('.jsonl'));

const noServices = {
  get: () => {
    throw new Error('a store opened by reference is given its directory; it needs no service');
  },
  has: () => false,
  onDispose: () => undefined,
};

/** The JSONL store of directory `dir`. */
const jsonlIn = (dir: string): SessionStore => jsonlStore.create({ dir }, noServices as never);

export const storeRowOf = (rows: readonly ComposedRow[]): ComposedRow | undefined => rows.find((r) => r.id === 'store');

/**
 * The store the product's `store` row names, opened outside a session (a session command's reader or writer);
 * a JSONL row without a directory keeps its logs in `$BRIDLE_HOME/sessions`. Contract: connects to nothing
 * until used; `overrides` (a Postgres URL named whole) go over the row's config.
 */
export function storeOfRows(rows: readonly ComposedRow[], home: string, overrides: { url?: string } = {}): SessionStore {
  const row = storeRowOf(rows);
  if (overrides.url !== undefined) return createPostgresSessionStore({ ...(row?.use === 'postgres' ? (row.config as object) : {}), url: overrides.url });
  if (row?.use === 'postgres') return createPostgresSessionStore(row.config as { url: string });
  if (row?.use === 'memory') return createMemorySessionStore();
  const dir = row?.use === 'jsonl' ? (row.config as { dir?: string } | undefined)?.dir : undefined;
  return jsonlIn(dir ?? join(home, 'sessions'));
}

/** Whether the product keeps its sessions where other workers can take them over (a database): the lease sweep's and the relay's condition. */
export const sharedStoreRow = (rows: readonly ComposedRow[]): boolean => storeRowOf(rows)?.use === 'postgres';

/**
 * Where `ref` lives under the product's `store` row, as a store and an id in it. Contract: pure but for
 * opening a store object (which connects only when used); never throws for a well-formed product.
 */
export function sessionOfRef(rows: readonly ComposedRow[], home: string, ref: string): SessionRef {
  if (isDatabaseRef(ref) && ref.includes('#')) {
    const at = ref.indexOf('#');
    return { store: storeOfRows(rows, home, { url: ref.slice(0, at) }), id: decodeURIComponent(ref.slice(at + 1)) };
  }
  if (looksLikePath(ref) && storeRowOf(rows)?.use !== 'postgres') {
    const path = isAbsolute(ref) ? ref : resolve(ref);
    // The file's own name: slicing past `dirname` cut one character too many off a log at the root (`/x`).
    return { store: jsonlIn(dirname(path)), id: basename(path, '.jsonl') };
  }
  return { store: storeOfRows(rows, home), id: ref };
}

/** The store a `--store <url|dir>` names (a listing's), else the product's row's. */
export function storeOfFlag(store: string | undefined, rows: readonly ComposedRow[], home: string): SessionStore {
  if (store === undefined) return storeOfRows(rows, home);
  return isDatabaseRef(store) ? createPostgresSessionStore({ url: store }) : jsonlIn(resolve(store));
}

/**
 * The relay of the product's store, when it is one many workers share (ADR 0030, 0050): what `startServer()`
 * takes as `relay`; undefined for a store of one process (JSONL, memory). Contract: connects to nothing until used.
 */
export function relayOfRows(rows: readonly ComposedRow[], o: PostgresRelayOptions = {}): SessionRelay | undefined {
  const row = storeRowOf(rows);
  return row?.use === 'postgres' ? createPostgresRelay(createPostgresSessionStore(row.config as { url: string }), o) : undefined;
}

/**
 * The log at `path` read whole, as a store reads it (a file named as the log: `bridle eval`'s runs, a test's).
 * Contract: throws `LogAccessError` for a path that is not a readable regular file.
 */
export const logFileAt = (path: string): StoredLog => readStoredLog(path);
