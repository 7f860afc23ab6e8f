/**
 * The Postgres store's writer lock: a lease on the session's row in
 * `bridle_sessions` — its owner, an epoch, and an expiry (ADR 0025).
 *
 * Taking it is one transaction: the row is locked (`FOR UPDATE`), and taken
 * when it is free (released, or new) or its lease has expired, with
 * `epoch + 1`; a live lease refuses, naming its owner. The epoch is the
 * fencing token: every commit of the log checks, in its own statement, that
 * the row's epoch is still the one this lease took, so a writer that lost
 * its lease (paused, cut off, presumed dead and taken over) can never append
 * again. Expiry is judged by the database's clock (`now()`), the one clock
 * every worker shares; this process's clock is never compared with it.
 *
 * The lease renews itself every third of its length (a commit renews it
 * too); a renewal that finds the epoch changed marks the lease lost, and the
 * log then refuses every append and flush with `LEASE_LOST`.
 */
import { hostname } from 'node:os';
import type { Pool } from './postgres-pool.js';
import { LeaseLostError, SessionLockedError, type LockHolder } from '../../log/errors.js';
import type { WriterLock } from '../../ports/store.js';

export interface LeaseOptions {
  /** This worker, as the lease names it (tests pass others to play two workers in one process). */
  pid?: number;
  host?: string;
  /** Whether the lease renews itself (default true; a test turns it off to play a paused worker). */
  renew?: boolean;
}

/** A held lease: the `WriterLock` of a Postgres session, with the epoch its commits carry. */
export interface Lease extends WriterLock {
  readonly id: string;
  readonly epoch: number;
  readonly leaseMs: number;
  /** Set once the lease is known lost (a renewal or a commit found another epoch). */
  readonly lost: LeaseLostError | undefined;
  markLost(detail: string): LeaseLostError;
  /** Settles once a `release()` has reached the database (or failed to). */
  released(): Promise<void>;
}

interface Row {
  owner: LockHolder | null;
  epoch: string;
  expired: boolean;
}

const SINCE = `to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const OWNER = `jsonb_build_object('pid', $2::int, 'host', $3::text, 'since', ${SINCE})`;
const EXPIRY = `now() + $4::int * interval '1 millisecond'`;

/**
 * The releases of this process that have not reached the database yet, by pool and session. `release()` returns at
 * once (a closing session does not wait on the database), so without this a claim of the same session right after,
 * in this process, could find its own released lease still live and be refused.
 */
const pendingReleases = new WeakMap<Pool, Map<string, Promise<void>>>();

function pendingOf(pool: Pool): Map<string, Promise<void>> {
  let m = pendingReleases.get(pool);
  if (!m) pendingReleases.set(pool, (m = new Map()));
  return m;
}

/**
 * Contract: as `AcquireWriterLock` (ports/store.ts), asynchronously: a held lease (`tookOver` naming the owner
 * whose lease had expired), or `SessionLockedError` naming the live owner. Never waits for a lease to expire; waits
 * only for this process's own release of the same session to reach the database, so release-then-claim succeeds.
 */
export async function claimLease(pool: Pool, id: string, location: string, leaseMs: number, o: LeaseOptions = {}): Promise<Lease> {
  // A release of this session by this process that is still on its way is waited for, so it is seen.
  await pendingReleases.get(pool)?.get(id);
  const pid = o.pid ?? process.pid;
  const host = o.host ?? hostname();
  for (let attempt = 0; attempt < 3; attempt++) {
    // A new session: one statement creates it held (ADR 0093).
    const ins = await pool.query<{ owner: LockHolder; epoch: string }>(
      `INSERT INTO bridle_sessions (id, owner, epoch, lease_expires) VALUES ($1, ${OWNER}, 1, ${EXPIRY}) ON CONFLICT (id) DO NOTHING RETURNING owner, epoch`,
      [id, pid, host, leaseMs],
    );
    if (ins.rows[0]) return held(pool, id, location, leaseMs, { owner: ins.rows[0].owner, epoch: Number(ins.rows[0].epoch) }, o.renew ?? true);
    // An existing one: one statement takes it when free or expired, judged on the locked row, so a live lease is never taken.
    const up = await pool.query<{ owner: LockHolder; epoch: string; prev: LockHolder | null }>(
      `UPDATE bridle_sessions t SET owner = ${OWNER}, epoch = t.epoch + 1, lease_expires = ${EXPIRY}
         FROM (SELECT id, owner AS prev FROM bridle_sessions WHERE id = $1 FOR UPDATE) p
        WHERE t.id = p.id AND (t.owner IS NULL OR t.lease_expires IS NULL OR t.lease_expires <= now())
        RETURNING t.owner, t.epoch, p.prev`,
      [id, pid, host, leaseMs],
    );
    const u = up.rows[0];
    if (u) return held(pool, id, location, leaseMs, { owner: u.owner, epoch: Number(u.epoch), ...(u.prev ? { tookOver: u.prev } : {}) }, o.renew ?? true);
    // Refused: name the live owner (or look again if it was freed or removed meanwhile).
    const cur = await pool.query<Row>('SELECT owner, epoch, (lease_expires IS NULL OR lease_expires <= now()) AS expired FROM bridle_sessions WHERE id = $1', [id]);
    const row = cur.rows[0];
    if (!row || row.owner === null || row.expired) continue;
    const self = row.owner.pid === pid && row.owner.host === host;
    throw new SessionLockedError(row.owner, location, self ? 'that is this process: it has the session open already' : `its lease (epoch ${row.epoch}) has not expired`);
  }
  throw new SessionLockedError(undefined, location, 'its lease kept changing hands; try again');
}

function held(pool: Pool, id: string, location: string, leaseMs: number, t: { owner: LockHolder; epoch: number; tookOver?: LockHolder }, renews: boolean): Lease {
  let lost: LeaseLostError | undefined;
  let releasing: Promise<void> | undefined;
  let renewing = false;
  const renew = async () => {
    if (renewing || lost || releasing) return;
    renewing = true;
    try {
      const r = await pool.query(`UPDATE bridle_sessions SET lease_expires = now() + $3::int * interval '1 millisecond' WHERE id = $1 AND epoch = $2 AND owner IS NOT NULL`, [id, t.epoch, leaseMs]);
      if (r.rowCount === 0 && !releasing) lease.markLost('a renewal found the session taken over');
    } catch {
      // The database is out of reach: the next renewal tries again, and a commit meanwhile finds out for itself.
    } finally {
      renewing = false;
    }
  };
  const timer = renews ? setInterval(() => void renew(), Math.max(10, Math.floor(leaseMs / 3))) : undefined;
  timer?.unref();
  const lease: Lease = {
    id,
    location,
    holder: t.owner,
    ...(t.tookOver ? { tookOver: t.tookOver } : {}),
    epoch: t.epoch,
    leaseMs,
    get lost() {
      return lost;
    },
    markLost(detail) {
      if (timer) clearInterval(timer);
      lost ??= new LeaseLostError(location, t.epoch, detail);
      return lost;
    },
    release() {
      if (releasing) return;
      if (timer) clearInterval(timer);
      // A lost lease is another's now: nothing of it is ours to end.
      releasing = lost
        ? Promise.resolve()
        : pool.query('UPDATE bridle_sessions SET owner = NULL, lease_expires = NULL WHERE id = $1 AND epoch = $2', [id, t.epoch]).then(
            () => undefined,
            () => undefined,
          );
      const pending = pendingOf(pool);
      const mine = releasing;
      pending.set(id, mine);
      void mine.then(() => {
        if (pending.get(id) === mine) pending.delete(id);
      });
    },
    released: () => releasing ?? Promise.resolve(),
  };
  return lease;
}
