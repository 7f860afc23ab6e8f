/**
 * The Postgres store's tables, created or migrated on first use under a
 * transaction-scoped advisory lock (so workers starting together migrate
 * once), with the version they are at in `bridle_schema`. A database at a
 * version newer than this bridle knows is refused, naming both: an older
 * bridle must not write tables whose meaning it does not know.
 *
 *   bridle_sessions  one row per session: its header (the `session/start`
 *                    entry), the lease (owner, epoch, expiry) and the last
 *                    committed seq
 *   bridle_entries   the log: (session, seq) → the canonical line, append-only;
 *                    a line is JSON text, whose escapes (`\u0000`, a lone
 *                    `\ud800`) a text column keeps as written (ADR 0042)
 *   bridle_inbox     what a worker that does not own a session forwards to its
 *                    owner (ADR 0030, 0032): inputs, approval answers, cancels
 *                    and compactions, each settled with the seq it was logged at;
 *                    since 4 the request is the row's `forwarded` JSON text
 *   since 5, `bridle_sessions_lease`: the sweep's index on lease expiry
 */
import type { Pool } from './postgres-pool.js';

/** The version this bridle writes; every step up to it is in `MIGRATIONS`. */
export const SCHEMA_VERSION = 5;

/** A database whose bridle tables this bridle cannot use. Code `STORE_SCHEMA_TOO_NEW`. */
export class StoreSchemaError extends Error {
  readonly code = 'STORE_SCHEMA_TOO_NEW';
  constructor(
    readonly location: string,
    readonly found: number,
    readonly supported: number,
  ) {
    super(`the session store ${location} is at schema version ${found}, newer than this bridle knows (${supported}); upgrade bridle to use it`);
    this.name = 'StoreSchemaError';
  }
}

/** Migration n takes the schema from version n - 1 to n. Never edited once released: a change is a new step. */
export const MIGRATIONS: readonly (readonly string[])[] = [
  [],
  [
    `CREATE TABLE bridle_sessions (
       id            text PRIMARY KEY,
       header        jsonb,
       owner         jsonb,
       epoch         bigint NOT NULL DEFAULT 0,
       lease_expires timestamptz,
       last_seq      bigint NOT NULL DEFAULT 0,
       created_at    timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE TABLE bridle_entries (
       session text   NOT NULL REFERENCES bridle_sessions (id),
       seq     bigint NOT NULL,
       line    text   NOT NULL,
       PRIMARY KEY (session, seq)
     )`,
  ],
  // 2 (ADR 0030): input a worker that does not own a session forwards to its owner, who logs it.
  [
    `CREATE TABLE bridle_inbox (
       id          bigserial PRIMARY KEY,
       session     text        NOT NULL REFERENCES bridle_sessions (id),
       mode        text        NOT NULL,
       text        text        NOT NULL,
       created_at  timestamptz NOT NULL DEFAULT now(),
       taken_epoch bigint,
       after_seq   bigint,
       seq         bigint
     )`,
    `CREATE INDEX bridle_inbox_open ON bridle_inbox (session, id) WHERE seq IS NULL`,
  ],
  // 3 (ADR 0032): the inbox carries approval answers, cancels and compactions too, and the owner's answer to each.
  // A bridle at 2 would log such a row as input, so it must refuse this schema (the newer-schema rule above).
  [
    `ALTER TABLE bridle_inbox ADD COLUMN kind text NOT NULL DEFAULT 'input'`,
    `ALTER TABLE bridle_inbox ALTER COLUMN mode DROP NOT NULL`,
    `ALTER TABLE bridle_inbox ADD COLUMN body jsonb`,
    `ALTER TABLE bridle_inbox ADD COLUMN answer jsonb`,
  ],
  // 4 (ADR 0042): a row's request as its JSON text, escapes kept, in place of mode, text and body: a text column
  // cannot hold a NUL and the driver replaces a lone surrogate, so a forwarded input holding either was refused
  // or changed. A bridle at 3 would read such a row's empty text as the input, so it must refuse this schema.
  [`ALTER TABLE bridle_inbox ADD COLUMN forwarded text`],
  // 5 (ADR 0061): the sweep's look for expired or released leases reads this index, not the whole sessions table.
  // Only an index: a bridle at 4 reads and writes the same tables, so it could use this schema, but the rule is one rule.
  [`CREATE INDEX bridle_sessions_lease ON bridle_sessions (lease_expires) WHERE header IS NOT NULL`],
];

/** Any constant both workers agree on: the advisory lock that serializes migrations. */
const MIGRATION_LOCK = 0x6272_646c;

const ready = new WeakMap<Pool, Promise<void>>();

/** Contract: resolves once the tables are at `SCHEMA_VERSION` (made so if older or absent), once per pool; rejects with `StoreSchemaError` for a newer schema. */
export function ensureSchema(pool: Pool, location: string): Promise<void> {
  let p = ready.get(pool);
  if (!p) {
    p = migrate(pool, location);
    ready.set(pool, p);
    // A failure (the database was down) is tried again by the next caller.
    p.catch(() => ready.delete(pool));
  }
  return p;
}

async function migrate(pool: Pool, location: string): Promise<void> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await c.query('CREATE TABLE IF NOT EXISTS bridle_schema (version integer NOT NULL)');
    const r = await c.query<{ version: number | null }>('SELECT max(version) AS version FROM bridle_schema');
    const found = r.rows[0]?.version ?? 0;
    if (found > SCHEMA_VERSION) throw new StoreSchemaError(location, found, SCHEMA_VERSION);
    for (let v = found + 1; v <= SCHEMA_VERSION; v++) {
      for (const sql of MIGRATIONS[v]!) await c.query(sql);
      await c.query('INSERT INTO bridle_schema (version) VALUES ($1)', [v]);
    }
    const enc = await c.query<{ server_encoding: string }>('SHOW server_encoding');
    const encoding = enc.rows[0]?.server_encoding;
    // A line is stored as text and must come back byte for byte: only a UTF-8 database (or one that stores bytes as given) keeps it.
    if (encoding !== 'UTF8' && encoding !== 'SQL_ASCII') throw new Error(`the session store ${location} uses encoding ${encoding}; bridle needs a UTF8 database (CREATE DATABASE … ENCODING 'UTF8')`);
    await c.query('COMMIT');
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}
