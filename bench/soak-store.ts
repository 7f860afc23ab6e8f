/**
 * Where the soak's sessions live (issue #26): the JSONL store under each
 * trial's `$BRIDLE_HOME` (read by path), or one Postgres database every
 * trial's processes share (`--store <url>`, each trial its own sessions,
 * found by their workspace), read back through the Postgres store's own
 * reader. The kill moments watch a trial's logs through `log()` and
 * `children()`, the same text either way (whole lines, each ending in a
 * newline); the judging (`soak-judge.ts`) never knows which store it was.
 *
 * On Postgres a line is there for a reader only once its commit returned, so
 * the moments that wait for a line see it durable: the `flush` moment's kill
 * lands 0–2 ms after the commit that carried it, while the process takes in
 * the commit's answer or just after (JSONL's lands while its fsync runs, or
 * just after). A kill inside the commit is not aimed at: the commit is one
 * statement, which the server either never got whole (a kill before the
 * flush) or runs to its end whatever becomes of its client (a kill just
 * after it); the report says so (`STORE_NOTES`).
 *
 * A killed process's lease outlives it (`--lease-ms`): the resume is refused
 * `SESSION_LOCKED` until it expires, and is asked again until then, as a
 * person would.
 */
import { readFileSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPostgresSessionStore } from '../adapters/store/postgres.js';
import { closePostgresPools } from '../adapters/store/postgres-pool.js';
import type { SessionStore } from '../ports/store.js';
import { findPostgresBin, startThrowawayPostgres, withDatabase, type ThrowawayPostgres } from '../test/helpers/postgres-cluster.js';
import type { Child, World } from '../test/fault/cli-world.js';
import { checkLog, checkStored, treeLogs, type LogCheck } from './soak-points.js';

/** One trial's logs, wherever they are. */
export interface TrialLogs {
  /** The CLI flags that put the trial's sessions in this store (none for JSONL under `$BRIDLE_HOME`). */
  flags: string[];
  /** Starts watching the logs `run` writes (Postgres: a poll of the committed rows). */
  watch(run: Child): void;
  /** The session's log as a reader sees it now: whole lines, each with its newline. */
  log(): string;
  /** The subagents' logs, as one text. */
  children(): string;
  /**
   * What a reader had seen of the session when its writer died, given what the kill moment last saw (`before`):
   * that on JSONL; on Postgres every line committed by then (read once the process is gone).
   */
  seen(before: string): Promise<string>;
  /** The session's log as it is now, read whole. */
  now(): Promise<string>;
  /** What `bridle resume` is given for the session (its log's path, its id), once anything of it was written. */
  ref(): Promise<string | undefined>;
  /** The session's log read back, verified and replayed, then each of its subagents'. */
  tree(): Promise<LogCheck[]>;
  /** Stops the watch. */
  close(): Promise<void>;
}

export interface SoakStore {
  /** `jsonl` or `postgres`. */
  kind: 'jsonl' | 'postgres';
  /** Where, for the report (a database URL without a password). */
  where: string;
  /** Whether a resume refused `SESSION_LOCKED` is asked again (a killed writer's lease outlives it until it expires). */
  retryLocked: boolean;
  trial(w: World): TrialLogs;
  close(): Promise<void>;
}

/** What the report says about a store: moments whose meaning differs on it. */
export const STORE_NOTES: Record<SoakStore['kind'], string[]> = {
  jsonl: [],
  postgres: [
    'flush on postgres: a line is seen once its commit returned, so the kill lands 0-2 ms after that commit (while the process takes in its answer, or just after); a kill inside the commit is not aimed at: the commit is one statement, which the server either never got whole (as a kill before the flush) or runs to its end whatever happens to its client (as a kill just after it)',
  ],
};

/** The JSONL store under each trial's `$BRIDLE_HOME/sessions`, read by path (the soak as it always was). */
export function jsonlSoakStore(): SoakStore {
  return {
    kind: 'jsonl',
    where: '$BRIDLE_HOME/sessions of each trial',
    retryLocked: false,
    trial(w) {
      const log = growingLog(w);
      return {
        flags: [],
        watch: () => undefined,
        log,
        seen: async (before) => before,
        now: async () => w.log(),
        children: () => treeLogs(w).slice(1).map((p) => readFileSync(p, 'utf8')).join(''),
        ref: async () => w.logPath(),
        tree: () => Promise.all(treeLogs(w).map(checkLog)),
        close: async () => undefined,
      };
    },
    close: async () => undefined,
  };
}

/** The log's text as the kill moments poll it (every 2 ms): read again only when the file has grown. */
export function growingLog(w: World): () => string {
  let path: string | undefined;
  let size = -1;
  let text = '';
  return () => {
    path ??= w.logPath();
    if (!path) return '';
    const now = statSync(path).size;
    if (now !== size) [size, text] = [now, readFileSync(path, 'utf8')];
    return text;
  };
}

/** A killed writer's lease, short so a resume need not wait long; renewed every third of it, so a live run keeps it even on a loaded machine. */
export const SOAK_LEASE_MS = 2000;

/**
 * The trial's sessions — those whose committed header names its workspace (a session is in the store, as `list`
 * shows it, from its first commit on) — the shortest id first, each with its lines after the seq already read
 * (`$2`, by id): one query a poll.
 */
const POLL = `
WITH s AS (SELECT id FROM bridle_sessions WHERE header->>'cwd' = $1)
SELECT s.id, e.seq, e.line
  FROM s LEFT JOIN bridle_entries e ON e.session = s.id AND e.seq > COALESCE(($2::jsonb ->> s.id)::bigint, 0)
 ORDER BY length(s.id), s.id, e.seq`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every trial's sessions in the database at `url` (one the soak made for itself); its pool is the soak's own. */
export function postgresSoakStore(url: string, where: string, onClose: () => Promise<void> = async () => undefined): SoakStore {
  const reader: SessionStore = createPostgresSessionStore({ url });
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  return {
    kind: 'postgres',
    where,
    retryLocked: true,
    trial(w) {
      let parent: string | undefined;
      const texts = new Map<string, { seq: number; text: string }>();
      let stopped = false;
      let loop: Promise<void> | undefined;
      /** The trial's sessions, the parent first, read again: each one's new lines appended to its text. */
      const poll = async (): Promise<string[]> => {
        const after = Object.fromEntries([...texts].map(([id, t]) => [id, t.seq]));
        const rows = (await pool.query<{ id: string; seq: string | null; line: string | null }>(POLL, [w.workspace, JSON.stringify(after)])).rows;
        parent ??= rows[0]?.id;
        for (const r of rows) {
          const t = texts.get(r.id) ?? { seq: 0, text: '' };
          texts.set(r.id, t);
          if (r.seq !== null) [t.seq, t.text] = [Number(r.seq), `${t.text}${r.line}\n`];
        }
        // A child's id extends its parent's.
        return parent ? [...new Set(rows.map((r) => r.id))].filter((id) => id === parent || id.startsWith(`${parent}.`)) : [];
      };
      return {
        flags: ['--store', url, '--lease-ms', String(SOAK_LEASE_MS)],
        watch() {
          loop = (async () => {
            while (!stopped) {
              await poll().catch(() => undefined);
              await sleep(2);
            }
          })();
        },
        log: () => (parent ? (texts.get(parent)?.text ?? '') : ''),
        async seen() {
          stopped = true;
          await loop;
          await poll();
          return parent ? (texts.get(parent)?.text ?? '') : '';
        },
        async now() {
          const read = parent ? await reader.read(parent) : undefined;
          return read ? read.lines.map((l) => `${l}\n`).join('') : '';
        },
        children: () => [...texts].filter(([id]) => parent !== undefined && id.startsWith(`${parent}.`)).map(([, t]) => t.text).join(''),
        async ref() {
          await poll();
          return parent;
        },
        async tree() {
          return Promise.all((await poll()).map((id) => checkStored(reader, id)));
        },
        async close() {
          stopped = true;
          await loop;
        },
      };
    },
    async close() {
      await pool.end();
      await closePostgresPools();
      await onClose();
    },
  };
}

/** The line a soak on Postgres prints when it has none. */
export const NO_POSTGRES =
  'soak: --store postgres needs Postgres: install the postgresql package (apt-get install postgresql: initdb and pg_ctl, under /usr/lib/postgresql/<version>/bin), or set BRIDLE_TEST_PG_URL (or BRIDLE_BENCH_PG_URL) to a server the soak may create a database in';

/**
 * A database of its own for one soak: on `BRIDLE_BENCH_PG_URL`'s or `BRIDLE_TEST_PG_URL`'s server (or `url`'s, when
 * given), else on a throwaway cluster from Debian's binaries (test/helpers/postgres-cluster.ts), stopped at the end.
 * Contract: throws `NO_POSTGRES` when there is neither.
 */
export async function startPostgresSoakStore(url?: string, env: NodeJS.ProcessEnv = process.env): Promise<SoakStore> {
  const server = url ?? env.BRIDLE_BENCH_PG_URL ?? env.BRIDLE_TEST_PG_URL;
  let cluster: ThrowawayPostgres | undefined;
  if (!server) {
    const bin = findPostgresBin(env);
    if (!bin) throw new Error(NO_POSTGRES);
    cluster = startThrowawayPostgres(bin);
  }
  const base = server ?? cluster!.url;
  const name = `bridle_soak_${randomBytes(6).toString('hex')}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  try {
    await admin(`CREATE DATABASE ${name} ENCODING 'UTF8' TEMPLATE template0`);
  } catch (err) {
    cluster?.stop();
    throw err;
  }
  const where = cluster ? `a throwaway cluster (${cluster.dir}), database ${name}` : `${new URL(base).host || 'a unix socket'}, database ${name}`;
  return postgresSoakStore(withDatabase(base, name), where, async () => {
    if (cluster) cluster.stop();
    else await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
  });
}
