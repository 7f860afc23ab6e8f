/**
 * One transaction per round across sessions on Postgres (ADR 0073). The logs
 * of one pool flush in shared rounds (`flush-rounds.ts`): a round takes what
 * each of its logs appended since its last commit and commits all of it as
 * one statement — one transaction — in which each log's batch is fenced on
 * its own: its sessions row must still be at the lease's epoch, held, and at
 * the seq the batch follows, or none of that log's lines are inserted (and
 * the others' still are). The statement answers which logs it committed; a
 * log it did not is looked at again, to say why (`LEASE_LOST`, or
 * `SEQ_MISMATCH`), and only its flush fails.
 *
 * A statement the database refused as a whole (it answered with an error:
 * nothing was committed) is tried again log by log, so a log that cannot be
 * committed fails alone. A statement whose answer never came (the connection
 * broke) may or may not have committed: every log of the round fails, and
 * as ever a failed commit is final for its log (ADR 0017).
 */
import type { Lease } from './postgres-lease.js';
import type { Pool } from './postgres-pool.js';
import { createFlushRounds, type FlushRounds } from './flush-rounds.js';
import { channelFor, ENTRIES_CHANNEL } from './postgres-workers.js';

/** What one log commits in a round. `header`: the session/start line as the sessions row's jsonb can hold it. */
export interface PgBatch {
  id: string;
  lease: Lease;
  lines: { seq: number; line: string; header?: string }[];
  /** After the commit, wake the workers relaying the session (ADR 0030). */
  notify: boolean;
}

/** A log as a round sees it. */
export interface PgCommitter {
  /** What it has appended since its last round; undefined when nothing. Contract: throws the log's error when it can commit nothing more (its lease lost, an earlier commit failed). */
  take(): PgBatch | undefined;
}

const COMMIT = `
WITH b AS (
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::int[]) WITH ORDINALITY AS b (id, epoch, prev, last, header, lease_ms, k)
), s AS (
  UPDATE bridle_sessions t
     SET last_seq = b.last, lease_expires = now() + b.lease_ms * interval '1 millisecond', header = COALESCE(t.header, b.header::jsonb)
    FROM b
   WHERE t.id = b.id AND t.epoch = b.epoch AND t.owner IS NOT NULL AND t.last_seq = b.prev
  RETURNING b.k
), i AS (
  INSERT INTO bridle_entries (session, seq, line)
  SELECT b.id, e.seq, e.line
    FROM unnest($7::bigint[], $8::bigint[], ARRAY(SELECT l.line FROM json_array_elements_text($9::json) WITH ORDINALITY AS l (line, n) ORDER BY l.n)) AS e (k, seq, line)
    JOIN s ON s.k = e.k JOIN b ON b.k = e.k
)
SELECT k FROM s`;

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** The database answered (a SQLSTATE) and rolled the statement back, as opposed to a connection that broke (class 08) or a server shutting down (57P). */
const wasRefused = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08') && !code.startsWith('57P');
};

/** Commits `batches` as one statement; the indexes of those it committed. */
async function commitTogether(pool: Pool, batches: readonly PgBatch[]): Promise<Set<number>> {
  const entries = batches.flatMap((b, i) => b.lines.map((l) => [i + 1, l.seq, l.line] as const));
  const r = await pool.query<{ k: string }>(COMMIT, [
    batches.map((b) => b.id),
    batches.map((b) => b.lease.epoch),
    batches.map((b) => b.lines[0]!.seq - 1),
    batches.map((b) => b.lines.at(-1)!.seq),
    batches.map((b) => b.lines.find((l) => l.header !== undefined)?.header ?? null),
    batches.map((b) => b.lease.leaseMs),
    entries.map((e) => e[0]),
    entries.map((e) => e[1]),
    // The lines as one JSON array, not a text[]: pg builds an array literal escaping each element in JavaScript, which
    // grows faster than the lines do (2,000 lines 67–112 ms, 20,000 about 2 s; JSON.stringify: 0.5 and 26 ms; ADR 0082).
    JSON.stringify(entries.map((e) => e[2])),
  ]);
  return new Set(r.rows.map((row) => Number(row.k) - 1));
}

/** Why a batch the statement did not commit was refused: the epoch moved on (taken over), or the log is not where this writer thinks it ends. */
async function whyNot(pool: Pool, b: PgBatch): Promise<Error> {
  const now = await pool.query<{ epoch: string; last_seq: string; owner: { pid: number; host: string } | null }>('SELECT epoch, last_seq, owner FROM bridle_sessions WHERE id = $1', [b.id]);
  const row = now.rows[0];
  if (!row || Number(row.epoch) !== b.lease.epoch || row.owner === null) {
    return b.lease.markLost(row ? `the session is at epoch ${row.epoch}${row.owner ? `, held by pid ${row.owner.pid} on ${row.owner.host}` : ''}` : 'the session is gone from the store');
  }
  return Object.assign(new Error(`the session's log in the store ends at seq ${row.last_seq}, but this writer's next entry is seq ${b.lines[0]!.seq}`), { code: 'SEQ_MISMATCH' });
}

/** Each batch's outcome from one statement for all of them; log by log when the database refused the statement whole. */
async function commitBatches(pool: Pool, batches: readonly PgBatch[]): Promise<(Error | undefined)[]> {
  let committed: Set<number>;
  try {
    committed = await commitTogether(pool, batches);
  } catch (err) {
    if (batches.length > 1 && wasRefused(err)) return Promise.all(batches.map(async (b) => (await commitBatches(pool, [b]))[0]));
    return batches.map(() => asError(err));
  }
  const out = await Promise.all(batches.map((b, i) => (committed.has(i) ? undefined : whyNot(pool, b).catch(asError))));
  // A hint, after the commit and outside its transaction (notifying commits serialize): relays read by seq anyway.
  const woken = batches.filter((b, i) => b.notify && committed.has(i));
  if (woken.length > 0) {
    void pool.query('SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) AS n (c, p)', [woken.map((b) => channelFor(ENTRIES_CHANNEL, b.id)), woken.map((b) => b.id)]).catch(() => undefined);
  }
  return out;
}

/** One round: each log's batch taken, all committed in one transaction; each log's own outcome. Contract: never rejects. */
export const commitRound = (pool: Pool) => async (logs: readonly PgCommitter[]): Promise<(Error | undefined)[]> => {
  const out: (Error | undefined)[] = logs.map(() => undefined);
  const batches: PgBatch[] = [];
  const at: number[] = [];
  logs.forEach((log, i) => {
    try {
      const b = log.take();
      if (b && b.lines.length > 0) (batches.push(b), at.push(i));
    } catch (err) {
      out[i] = asError(err);
    }
  });
  if (batches.length === 0) return out;
  const outcomes = await commitBatches(pool, batches).catch((err: unknown) => batches.map(() => asError(err)));
  outcomes.forEach((o, j) => (out[at[j]!] = o));
  return out;
};

const rounds = new WeakMap<Pool, FlushRounds<PgCommitter>>();

/** The rounds of `pool`'s logs: one per pool (one per database URL in this process, `poolFor`), shared by every session on it. */
export function commitRoundsFor(pool: Pool): FlushRounds<PgCommitter> {
  let r = rounds.get(pool);
  if (!r) rounds.set(pool, (r = createFlushRounds(commitRound(pool))));
  return r;
}
