/**
 * The Postgres store (ADR 0025): many workers sharing one database
 * (docs/design.md §10). Each session's log is rows of `bridle_entries`, keyed by
 * (session, seq), each holding the canonical line the recorder wrote, so a
 * session read back is byte for byte what the JSONL store would hold; its
 * row in `bridle_sessions` holds the header, the lease and the last
 * committed seq (`postgres-schema.ts`).
 *
 * `append` keeps the line in memory, in order. `flush` commits every line
 * appended since the last commit in the next round of the pool's commits
 * (`postgres-commit.ts`, ADR 0073): one statement — one transaction — for
 * every session of the pool that asked in that tick, which for each checks
 * the lease's epoch and that its batch follows its last committed seq,
 * advances it, renews the lease and inserts the lines: an entry is durable
 * when that commit returns. Many sessions of a process share one commit (one
 * WAL flush); many processes' commits share the database's group commit.
 *
 * Failures, as for JSONL (ADR 0017): a commit that fails is final for this
 * log — every later flush rejects with the same error, since a commit whose
 * answer was lost may or may not have happened, and only a reader of the
 * table (a resume) can tell. A lease that was lost refuses the flush with
 * `LEASE_LOST`, and every later append too, so the session stops there
 * (its turn cannot even be closed in the log) and runs nothing more.
 *
 * `delete` (ADR 0076) takes the lease first, as a writer would (a live one
 * refuses it `SESSION_LOCKED`), then removes the session's row, its entries
 * and its inbox in one transaction that checks the lease's epoch: a writer
 * it took over finds the session gone at its next commit (`LEASE_LOST`).
 * A subagent's session (`<id>.<callId>`) is a session of its own and stays,
 * as in the JSONL store.
 */
import { hostname } from 'node:os';
import type { Pool } from './postgres-pool.js';
import { z } from 'zod';
import { STORE } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import type { OpenedLog, SessionStore, StoredSession, WriterLock } from '../../ports/store.js';
import { SessionLockedError } from '../../log/errors.js';
import { MARKER_LINE } from '../../log/markers.js';
import type { Entry } from '../../log/entries.js';
import { claimLease, type Lease, type LeaseOptions } from './postgres-lease.js';
import { asUnavailable, isPostgresUrl, poolFor, redactUrl } from './postgres-pool.js';
import { listedExtras, TITLE_LINES } from './listed.js';
import { ensureSchema } from './postgres-schema.js';
import { commitRoundsFor, type PgCommitter } from './postgres-commit.js';

export const DEFAULT_LEASE_MS = 15_000;

export const PostgresConfig = z.strictObject({
  /** `postgres://user@host:port/db`; what the URL leaves out comes from libpq's variables (`PGHOST`, `PGPASSWORD`, …). */
  url: z.string().refine(isPostgresUrl, { message: 'must be a postgres:// or postgresql:// URL' }),
  /** How long a lease lasts without renewal; it renews every third of it. */
  leaseMs: z.int().min(100).max(3_600_000).default(DEFAULT_LEASE_MS),
  /** Connections this process opens to the database at most (shared by all its sessions). */
  poolSize: z.int().min(1).max(1000).default(10),
  /** After each commit, `NOTIFY bridle_entries` with the session's id (ADR 0030): workers relaying it to their clients wake up. `bridle serve` turns it on. */
  notify: z.boolean().default(false),
});
export type PostgresConfig = z.infer<typeof PostgresConfig>;
export type PostgresConfigInput = z.input<typeof PostgresConfig>;

export interface PostgresSessionStore extends SessionStore {
  readonly url: string;
  /** The pool, its tables ready: for the workers' relay and inbox (`postgres-relay.ts`). */
  pool(): Promise<Pool>;
}

const PAGE = 5000;

/**
 * A session's rows and its child rows (its entries, its inbox), in one transaction, under the lease `delete` took:
 * the epoch is checked with the row locked, so a writer that took the session over meanwhile keeps it.
 */
const DELETE = [
  'SELECT 1 FROM bridle_sessions WHERE id = $1 AND epoch = $2 FOR UPDATE',
  'DELETE FROM bridle_inbox WHERE session = $1',
  'DELETE FROM bridle_entries WHERE session = $1',
  'DELETE FROM bridle_sessions WHERE id = $1',
] as const;

const LIST = `
SELECT s.id, s.owner, s.epoch, s.last_seq, s.header->>'cwd' AS cwd, s.header->>'model' AS model,
       (s.owner IS NOT NULL AND s.lease_expires > now()) AS live, s.lease_expires,
       (SELECT e.line FROM bridle_entries e WHERE e.session = s.id AND e.line ~ $1 ORDER BY e.seq DESC LIMIT 1) AS marker,
       (SELECT e.line FROM bridle_entries e WHERE e.session = s.id AND e.seq = s.last_seq) AS last_line,
       ARRAY(SELECT e.line FROM bridle_entries e WHERE e.session = s.id AND e.seq <= $2 AND e.line LIKE '%"kind":"session/input"%' ORDER BY e.seq) AS inputs
  FROM bridle_sessions s
 WHERE s.header IS NOT NULL
 ORDER BY s.id`;

/** A JSON escape of U+0000 or of a surrogate (paired or not), after an even run of backslashes: the ones `jsonb` may refuse. */
const JSONB_REFUSES = /(?<!\\)(?:\\\\)*\\u(?:0000|[dD][89a-fA-F])/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * The header as `bridle_sessions.header` (jsonb) holds it: the line itself, unless it holds a NUL or a lone
 * surrogate, which jsonb refuses — then with each replaced by U+FFFD. The column only serves the store's queries
 * (a listing's cwd and model, a fork's origin); the session/start entry itself is its line in `bridle_entries`,
 * byte for byte (ADR 0042). Contract: pure; valid JSON out for valid JSON in.
 */
export function headerJson(line: string): string {
  if (!JSONB_REFUSES.test(line)) return line;
  return JSON.stringify(JSON.parse(line), (_k, v: unknown) => (typeof v === 'string' ? v.replaceAll('\u0000', '\ufffd').replace(LONE_SURROGATE, '\ufffd') : v));
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** What the store's jobs share: where it is (for messages), the pool with its tables ready, and the claim of a lease. */
interface StoreContext {
  where: string;
  locationOf(id: string): string;
  /** The pool, the tables made ready first; a failure to connect is `StoreUnavailableError`. */
  ready(): Promise<Pool>;
  claim(id: string): Promise<Lease>;
}

/** The first `ready` connects and makes the tables; `claim` takes a lease, remembered so `open` can tell its own. */
function storeContext(c: PostgresConfig, o: LeaseOptions, leases: WeakSet<Lease>): StoreContext {
  const where = redactUrl(c.url);
  const locationOf = (id: string) => `${where}#${id}`;
  let pool: Promise<Pool> | undefined;
  const ready = async (): Promise<Pool> => {
    pool ??= poolFor(c.url, c.poolSize);
    const p = await pool;
    try {
      await ensureSchema(p, where);
    } catch (err) {
      throw asUnavailable(err, where);
    }
    return p;
  };
  const claim = async (id: string): Promise<Lease> => {
    const p = await ready();
    try {
      const lease = await claimLease(p, id, locationOf(id), c.leaseMs, o);
      leases.add(lease);
      return lease;
    } catch (err) {
      throw asUnavailable(err, where);
    }
  };
  return { where, locationOf, ready, claim };
}

/** Every session the store holds (those with a `session/start` committed), by id. */
async function listSessions(x: StoreContext): Promise<StoredSession[]> {
  const p = await x.ready();
  type Row = { id: string; owner: { pid: number; host: string; since: string } | null; epoch: string; last_seq: string; cwd: string | null; model: string | null; live: boolean; lease_expires: Date | null; marker: string | null; last_line: string | null; inputs: string[] };
  let rows: Row[];
  try {
    rows = (await p.query<Row>(LIST, [MARKER_LINE.source, TITLE_LINES])).rows;
  } catch (err) {
    throw asUnavailable(err, x.where);
  }
  return rows.map((r) => {
    const marker = r.marker === null ? undefined : MARKER_LINE.exec(r.marker)?.[1];
    return {
      id: r.id,
      ...(r.owner && r.live ? { owner: { ...r.owner, epoch: Number(r.epoch), expires: r.lease_expires!.toISOString() } } : {}),
      ...(r.owner && !r.live ? { expired: r.owner } : {}),
      lastSeq: Number(r.last_seq),
      cwd: r.cwd ?? '',
      model: r.model ?? '',
      ...(marker ? { marker } : {}),
      ...listedExtras(r.inputs, r.last_line === null ? [] : [r.last_line]),
    };
  });
}

/** The forks of session `id`, by the seq they share with it. */
async function forksOf(x: StoreContext, id: string) {
  const p = await x.ready();
  let rows: { id: string; seq: string }[];
  try {
    // The header is the session/start entry as committed: its forkOf names the original and the seq shared.
    rows = (await p.query<{ id: string; seq: string }>("SELECT id, header->'forkOf'->>'seq' AS seq FROM bridle_sessions WHERE header->'forkOf'->>'session' = $1 AND jsonb_typeof(header->'forkOf'->'seq') = 'number'", [id])).rows;
  } catch (err) {
    throw asUnavailable(err, x.where);
  }
  return rows.map((r) => ({ id: r.id, seq: Number(r.seq), location: x.locationOf(r.id) })).sort((a, b) => a.seq - b.seq || a.id.localeCompare(b.id));
}

/** Session `id`'s lines from `fromSeq` on, read by pages; undefined when the store has no such session. */
async function tailOf(x: StoreContext, id: string, fromSeq: number): Promise<string[] | undefined> {
  const p = await x.ready();
  try {
    const s = await p.query<{ last_seq: string }>('SELECT last_seq FROM bridle_sessions WHERE id = $1', [id]);
    if (!s.rows[0]) return undefined;
    const out: string[] = [];
    for (let from = fromSeq; ; ) {
      const r = await p.query<{ seq: string; line: string }>('SELECT seq, line FROM bridle_entries WHERE session = $1 AND seq >= $2 ORDER BY seq LIMIT $3', [id, from, PAGE]);
      for (const row of r.rows) out.push(row.line);
      if (r.rows.length < PAGE) return out;
      from = Number(r.rows.at(-1)!.seq) + 1;
    }
  } catch (err) {
    throw asUnavailable(err, x.where);
  }
}

/** `delete` (ADR 0076): false when there is no such session; the lease first, then every row of it under that lease. */
async function deleteSession(x: StoreContext, id: string): Promise<boolean> {
  const p = await x.ready();
  try {
    if ((await p.query('SELECT 1 FROM bridle_sessions WHERE id = $1', [id])).rowCount === 0) return false;
  } catch (err) {
    throw asUnavailable(err, x.where);
  }
  // The claim first (SessionLockedError while a live writer holds it): nobody appends to a log being removed.
  const lease = await x.claim(id);
  try {
    if (await deleteRows(p, id, lease.epoch)) return true;
  } catch (err) {
    throw asUnavailable(err, x.where);
  } finally {
    // Its row is gone, so the release changes nothing: it stops the renewals.
    lease.release();
    await lease.released();
  }
  throw new SessionLockedError(undefined, x.locationOf(id), 'another writer took it over while it was being deleted');
}

/** Contract: never connects by itself; `claim`, `tail` and the first flush do, creating the tables if need be. */
export function createPostgresSessionStore(input: PostgresConfigInput, o: LeaseOptions = {}): PostgresSessionStore {
  const c = PostgresConfig.parse(input);
  const leases = new WeakSet<Lease>();
  const x = storeContext(c, o, leases);
  const store: PostgresSessionStore = {
    id: 'postgres',
    url: c.url,
    location: x.where,
    locate: x.locationOf,
    open(id, opts = {}) {
      const given = opts.lock;
      if (given && !leases.has(given as Lease)) throw new Error(`the lock given for session ${id} is not a lease of the Postgres store ${x.where}`);
      const lease = given ? Promise.resolve(given as Lease) : x.claim(id);
      return createPgLog(x.ready, id, x.locationOf(id), lease, given as Lease | undefined, c.notify, Boolean(opts.repair && given));
    },
    claim: x.claim,
    pool: x.ready,
    async list() {
      return { sessions: await listSessions(x), problems: [] };
    },
    async read(id) {
      // Commits are whole: a Postgres log never ends in a torn line.
      const lines = await tailOf(x, id, 1);
      return lines ? { location: x.locationOf(id), lines } : undefined;
    },
    forks: (id) => forksOf(x, id),
    delete: (id) => deleteSession(x, id),
    tail: (id, fromSeq = 1) => tailOf(x, id, fromSeq),
  };
  return store;
}

/** Contract: true once session `id`'s rows are gone; false, removing nothing, when its epoch is no longer `epoch`. */
async function deleteRows(pool: Pool, id: string, epoch: number): Promise<boolean> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const [lock, ...rest] = DELETE;
    if ((await c.query(lock, [id, epoch])).rowCount === 0) {
      await c.query('ROLLBACK');
      return false;
    }
    for (const sql of rest) await c.query(sql, [id]);
    await c.query('COMMIT');
    return true;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}

/**
 * One session's log over its lease. `known`: the lease, when the caller took it (it is in `lock` at once);
 * else the claim runs in the background (`ready`) and the first flush waits for it.
 */
function createPgLog(pool: () => Promise<Pool>, id: string, location: string, lease: Promise<Lease>, known: Lease | undefined, notifyAfter = false, keepLease = false): OpenedLog {
  // A claim that fails is seen by whoever awaits `ready` or flushes; not unhandled meanwhile.
  lease.catch(() => undefined);
  let held: Lease | undefined = known;
  void lease.then((l) => (held = l), () => undefined);
  /** `header`: the session/start line as the sessions row's `header` column can hold it (`headerJson`). */
  let pending: { seq: number; line: string; header?: string }[] = [];
  let inflight: Promise<void> | undefined;
  /** The first commit that failed: no later flush may report success (see above). */
  let failed: Error | undefined;
  let closed = false;

  /** This log in a round of its pool's commits (`postgres-commit.ts`): what it appended since its last one. */
  const committer: PgCommitter = {
    take() {
      if (failed) throw failed;
      if (held?.lost) throw held.lost;
      if (pending.length === 0) return undefined;
      const lines = pending;
      pending = [];
      return { id, lease: held!, lines, notify: notifyAfter };
    },
  };
  /** The commit of everything appended so far, in the next round of the pool's commits, once the lease is held. */
  const commit = async () => {
    const l = await lease;
    if (l.lost) throw l.lost;
    return commitRoundsFor(await pool()).request(committer);
  };

  const log: OpenedLog = {
    location,
    ...(known ? { lock: known } : { ready: lease }),
    append(entry: Entry, line: string) {
      if (closed) throw new Error(`log store ${location} is closed`);
      if (held?.lost) throw held.lost;
      pending.push(entry.kind === 'session/start' ? { seq: entry.seq, line, header: headerJson(line) } : { seq: entry.seq, line });
    },
    flush() {
      if (closed) return Promise.resolve();
      if (failed) return Promise.reject(failed);
      if (pending.length === 0) return inflight ?? Promise.resolve();
      // The round takes the lines as it starts: a flush asked for before then joins it; one asked for after, the next round.
      const run = commit().catch((err: unknown) => {
        failed ??= asError(err);
        throw failed;
      });
      inflight = run;
      const clear = () => {
        if (inflight === run) inflight = undefined;
      };
      void run.then(clear, clear);
      return run;
    },
    async close() {
      if (closed) return;
      try {
        await log.flush();
      } finally {
        closed = true;
        // The lease goes with the log, whoever took it (as the JSONL lock does when the store closes); a repair's stays, for the session that goes on.
        const l = keepLease ? undefined : (held ?? (await lease.catch(() => undefined)));
        if (l) {
          l.release();
          await l.released();
        }
      }
    },
  };
  return log;
}

export const postgresStore = defineProvider({
  seam: STORE,
  name: 'postgres',
  config: PostgresConfig,
  create: (c): SessionStore => createPostgresSessionStore(c),
});

