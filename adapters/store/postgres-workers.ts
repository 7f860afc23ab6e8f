/**
 * Many workers on one Postgres store (ADR 0030): what a worker needs of the
 * database to serve sessions another worker owns.
 *
 * - **Wake-ups.** After each commit of a log, its writer sends
 *   `NOTIFY bridle_entries, '<session>'` as a statement of its own — never in
 *   the append's transaction, since notifying commits serialize on a global
 *   lock. A worker relaying the session to its clients LISTENs, and on a
 *   wake-up reads the entries past the last seq it relayed (`tail`). A
 *   notification is a hint only: missed ones (a dropped listening connection,
 *   a worker that started listening late) cost latency, not entries, since
 *   every relay also reads again on a timer.
 * - **Forwarded input.** Only the lease holder appends. A worker that does not
 *   own a session puts a client's input in `bridle_inbox` (committed) and
 *   notifies `bridle_inbox`; the owner takes the rows of the sessions it holds,
 *   in id order, logs each as its own input and writes the input's seq back,
 *   which the forwarding worker waits for before it answers its client. A row
 *   is marked taken (the taker's epoch, and the log's last seq then) before it
 *   is logged, so a taker that dies between the two leaves a row a later owner
 *   can settle from the log: a `session/input` past `after_seq` with its mode
 *   and text is the row's entry; none, and the row is delivered again.
 * - **Forwarded answers and cancels** (ADR 0032, schema 3). A row has a kind:
 *   `input` as above, or `approval` (an attached client's answer: call id,
 *   outcome, by), `cancel` or `compact`, with what it needs in `body`. The
 *   owner settles each with the seq of the entry it logged for it
 *   (`approval/decided`, `session/cancel`, `session/compact`; 0 when it logged
 *   nothing, as for a cancel with nothing running) or with its refusal in
 *   `answer` (`NOT_PENDING`: the approval was decided or never asked).
 * - **Byte for byte** (ADR 0042, schema 4). What a row asks is its `forwarded`
 *   column: the request as JSON text, so a NUL or a lone surrogate in an
 *   input arrives at the owner as the client sent it.
 */
import type { PgClient, Pool } from './postgres-pool.js';
import { importFor } from '../optional-packages.js';

export const ENTRIES_CHANNEL = 'bridle_entries';
export const INBOX_CHANNEL = 'bridle_inbox';
/** Notified with a row's id once its owner has settled it: the forwarding worker's wake-up (its poll is the net). */
export const SETTLED_CHANNEL = 'bridle_settled';
/** Live model chunks of a session, from its owner to the workers relaying it (ADR 0035): `<session>\n<deltas>`. */
export const DELTAS_CHANNEL = 'bridle_deltas';

/** How many channels each kind of notification is spread over (ADR 0061). */
export const CHANNEL_SHARDS = 32;

/**
 * Contract: pure, the same on every worker. The channel of `base` that carries session `id`'s notifications
 * (ADR 0061): `<base>_<n>`, n from an FNV-1a hash of the id. A worker LISTENs only on the shards of the
 * sessions it runs or relays, so it is not woken by every session's commits, inbox rows and live text; a
 * channel name cannot hold an arbitrary id (63 bytes, identifier rules), hence shards, not one per session.
 */
export function channelFor(base: string, id: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return `${base}_${(h >>> 0) % CHANNEL_SHARDS}`;
}

export type InputMode = 'followup' | 'steer' | 'inject';

/** What a row asks of the session's owner. */
export type Forwarded =
  | { kind: 'input'; mode: InputMode; text: string }
  /** An answer from a client attached to the session on the forwarding worker (only such a client may answer). */
  | { kind: 'approval'; callId: string; outcome: 'allowed-once' | 'rejected'; by: string; attached: true }
  | { kind: 'cancel'; by: string }
  | { kind: 'compact'; by: string };

export type InboxRow = Forwarded & {
  id: number;
  takenEpoch: number | null;
  afterSeq: number | null;
};

/** The owner's refusal of a forwarded row, as its own client would have been refused. */
export interface InboxRefusal {
  code: number;
  reason: string;
  message: string;
}

/** How the owner settled a row: the seq it logged it at (0: nothing logged), or its refusal. */
export type InboxSettled = { seq: number } | { refused: InboxRefusal };

/** A session's lease as the database sees it now. */
export interface LeaseStatus {
  owner: { pid: number; host: string; since: string } | null;
  epoch: number;
  /** An owner whose lease has not expired, by the database's clock. */
  live: boolean;
}

export async function leaseStatus(pool: Pool, id: string): Promise<LeaseStatus | undefined> {
  const r = await pool.query<{ owner: LeaseStatus['owner']; epoch: string; live: boolean }>('SELECT owner, epoch, (owner IS NOT NULL AND lease_expires > now()) AS live FROM bridle_sessions WHERE id = $1', [id]);
  const row = r.rows[0];
  return row ? { owner: row.owner, epoch: Number(row.epoch), live: row.live } : undefined;
}

export async function notify(pool: Pool, channel: string, payload: string): Promise<void> {
  await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
}

/** Puts a client's input in the session's inbox (durable once this resolves) and wakes the owner; the row's id. */
export function forwardInput(pool: Pool, session: string, mode: InputMode, text: string): Promise<number> {
  return forward(pool, session, { kind: 'input', mode, text });
}

/** Puts what a client asked of a session another worker runs in its inbox (durable once this resolves) and wakes the owner; the row's id. */
export async function forward(pool: Pool, session: string, f: Forwarded): Promise<number> {
  // As JSON text (schema 4): its escapes keep a NUL or a lone surrogate that a text parameter would refuse or replace.
  const r = await pool.query<{ id: string }>("INSERT INTO bridle_inbox (session, kind, mode, text, forwarded) VALUES ($1, $2, $3, '', $4) RETURNING id", [
    session,
    f.kind,
    f.kind === 'input' ? f.mode : null,
    JSON.stringify(f),
  ]);
  const id = Number(r.rows[0]!.id);
  await notify(pool, channelFor(INBOX_CHANNEL, session), session).catch(() => undefined);
  return id;
}

/** The seq of the `session/input` entry an inbox row became, once its owner has logged it. */
export async function inboxSeq(pool: Pool, id: number): Promise<number | undefined> {
  const s = await inboxSettled(pool, id);
  return s && 'seq' in s ? s.seq : undefined;
}

/** How the owner settled a row; undefined while it is open. */
export async function inboxSettled(pool: Pool, id: number): Promise<InboxSettled | undefined> {
  const r = await pool.query<{ seq: string | null; answer: { refused?: InboxRefusal } | null }>('SELECT seq, answer FROM bridle_inbox WHERE id = $1', [id]);
  const row = r.rows[0];
  if (!row || row.seq === null) return undefined;
  return row.answer?.refused ? { refused: row.answer.refused } : { seq: Number(row.seq) };
}

/** The session's rows not yet settled, oldest first. */
export async function openInbox(pool: Pool, session: string): Promise<InboxRow[]> {
  const r = await pool.query<{ id: string; kind: string; mode: InputMode | null; text: string; body: Record<string, unknown> | null; forwarded: string | null; taken_epoch: string | null; after_seq: string | null }>(
    'SELECT id, kind, mode, text, body, forwarded, taken_epoch, after_seq FROM bridle_inbox WHERE session = $1 AND seq IS NULL ORDER BY id',
    [session],
  );
  return r.rows.map((x) => {
    const common = { id: Number(x.id), takenEpoch: x.taken_epoch === null ? null : Number(x.taken_epoch), afterSeq: x.after_seq === null ? null : Number(x.after_seq) };
    // A row written before schema 4 has no `forwarded`: its columns say what it asks.
    const f: Forwarded =
      x.forwarded !== null
        ? (JSON.parse(x.forwarded) as Forwarded)
        : x.kind === 'input'
          ? { kind: 'input', mode: x.mode ?? 'followup', text: x.text }
          : ({ kind: x.kind, ...x.body } as Forwarded);
    return { ...f, ...common } as InboxRow;
  });
}

/**
 * Marks a row taken by the holder of lease `epoch`, the log then ending at `afterSeq`; false when that
 * lease is no longer the session's (its holder must not log the row) or the row is settled.
 */
export async function takeInbox(pool: Pool, session: string, id: number, epoch: number, afterSeq: number): Promise<boolean> {
  const r = await pool.query(
    `UPDATE bridle_inbox SET taken_epoch = $3, after_seq = $4
      WHERE id = $2 AND session = $1 AND seq IS NULL
        AND EXISTS (SELECT 1 FROM bridle_sessions s WHERE s.id = $1 AND s.epoch = $3 AND s.owner IS NOT NULL)`,
    [session, id, epoch, afterSeq],
  );
  return r.rowCount === 1;
}

/** Settles a row with the seq its entry was logged at (0: the owner logged nothing for it). */
export async function settleInbox(pool: Pool, id: number, seq: number): Promise<void> {
  await pool.query('UPDATE bridle_inbox SET seq = $2 WHERE id = $1 AND seq IS NULL', [id, seq]);
  await notify(pool, SETTLED_CHANNEL, String(id)).catch(() => undefined);
}

/** Settles a row with the owner's refusal (its seq set to 0, so it is no longer open). */
export async function refuseInbox(pool: Pool, id: number, refused: InboxRefusal): Promise<void> {
  await pool.query('UPDATE bridle_inbox SET seq = 0, answer = $2 WHERE id = $1 AND seq IS NULL', [id, JSON.stringify({ refused })]);
  await notify(pool, SETTLED_CHANNEL, String(id)).catch(() => undefined);
}

/**
 * One LISTEN connection per URL in this process, shared by every listener (a pooled connection cannot
 * listen: it goes back to the pool). A connection that drops is opened again after a second; what was
 * notified meanwhile is missed. A listener's `listening` runs each time its channel's LISTEN is in place
 * (the first time, and after every reconnection), so it can read what it may have missed at once; its
 * timed reads are the net under the rest.
 */
export interface Bus {
  on(channel: string, fn: (payload: string) => void, listening?: () => void): () => void;
  close(): Promise<void>;
}

type ListenClient = PgClient & { connect(): Promise<void>; end(): Promise<void>; on(ev: string, fn: (...a: any[]) => void): void };

const buses = new Map<string, Bus>();

export function busFor(url: string): Bus {
  let bus = buses.get(url);
  if (bus) return bus;
  const listeners = new Map<string, Set<(payload: string) => void>>();
  const listening = new Map<string, Set<() => void>>();
  const heard = (ch: string) => {
    for (const f of listening.get(ch) ?? []) f();
  };
  let client: ListenClient | undefined;
  let connecting: Promise<void> | undefined;
  let closed = false;
  const connect = () =>
    (connecting ??= (async () => {
      const { default: pg } = await importFor('the Postgres store', () => import('pg'));
      const c = new pg.Client({ connectionString: url }) as unknown as ListenClient;
      c.on('notification', (m: { channel: string; payload?: string }) => {
        for (const fn of listeners.get(m.channel) ?? []) fn(m.payload ?? '');
      });
      c.on('error', () => {
        client = undefined;
        connecting = undefined;
        if (!closed) setTimeout(() => void connect().catch(() => undefined), 1000).unref();
      });
      await c.connect();
      client = c;
      for (const ch of listeners.keys()) {
        await c.query(`LISTEN ${ch}`);
        heard(ch);
      }
    })().catch((err: unknown) => {
      connecting = undefined;
      if (!closed) setTimeout(() => void connect().catch(() => undefined), 1000).unref();
      throw err;
    }));
  bus = {
    on(channel, fn, onListening) {
      if (!/^[a-z_][a-z_0-9]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
      let set = listeners.get(channel);
      const fresh = !set;
      if (!set) {
        set = new Set();
        listeners.set(channel, set);
      }
      set.add(fn);
      if (onListening) {
        let ls = listening.get(channel);
        if (!ls) listening.set(channel, (ls = new Set()));
        ls.add(onListening);
      }
      const c = client;
      if (c && fresh)
        void c.query(`LISTEN ${channel}`).then(
          () => heard(channel),
          () => undefined,
        );
      // Already listening: this listener's channel is in place now.
      else if (c && onListening) queueMicrotask(onListening);
      void connect().catch(() => undefined);
      return () => {
        set!.delete(fn);
        if (onListening) listening.get(channel)?.delete(onListening);
      };
    },
    async close() {
      closed = true;
      buses.delete(url);
      await client?.end().catch(() => undefined);
    },
  };
  buses.set(url, bus);
  return bus;
}

/** Ends every LISTEN connection of this process (tests, a server stopping). */
export async function closeBuses(): Promise<void> {
  await Promise.all([...buses.values()].map((b) => b.close()));
}

/** A session whose lease has expired or was released while it had work left (ADR 0034, 0042), as the sweep's query finds it. */
export interface ExpiredWithWork {
  id: string;
  lastSeq: number;
  /** Its last turn-or-session marker is a `turn/start`: a turn open (a call, an approval, a step under way). */
  turnOpen: boolean;
  /** Rows forwarded to it that no owner settled. */
  inbox: boolean;
}

export const SESSION_INPUT_LINE = '^\\{"seq":[0-9]+,"at":"[^"]*","kind":"session/input"';

/**
 * Sessions whose lease has expired (by the database's clock) or was released (ADR 0042: a worker that stopped, or
 * took the session and could not run it, may release it with work left; one released at rest has none), with a turn open, a `session/input` past their last marker, or an open inbox row — oldest expiry first, at most
 * `limit`, none of `skip` at the seq given for it. From the sessions table and, per expired session, two reads
 * backwards along the entries' key and one of the inbox: the logs themselves are not read. An input past the
 * marker may have been taken by a `user/message` (a steer at rest): the caller reads the log to tell.
 */
export async function expiredWithWork(pool: Pool, markerLine: string, limit: number, skip: ReadonlyMap<string, number> = new Map()): Promise<ExpiredWithWork[]> {
  const r = await pool.query<{ id: string; last_seq: string; kind: string | null; inbox: boolean }>(EXPIRED_WITH_WORK, [markerLine, SESSION_INPUT_LINE, [...skip.keys()], [...skip.values()], limit]);
  return r.rows.map((x) => ({ id: x.id, lastSeq: Number(x.last_seq), turnOpen: x.kind === 'turn/start', inbox: x.inbox }));
}

/**
 * The sweep's query. A released lease has owner and expiry both NULL (every write sets the two together), so
 * "released or expired" is said on `lease_expires` alone: both halves are then ranges of the partial index
 * `bridle_sessions_lease` (schema 5), and the live leases — most rows of a busy store — are never visited.
 * Exported for the test that reads its plan.
 */
export const EXPIRED_WITH_WORK = `SELECT s.id, s.last_seq, m.kind,
            EXISTS (SELECT 1 FROM bridle_inbox b WHERE b.session = s.id AND b.seq IS NULL) AS inbox
       FROM bridle_sessions s
       LEFT JOIN LATERAL (SELECT e.seq, substring(e.line from $1) AS kind FROM bridle_entries e
                           WHERE e.session = s.id AND e.line ~ $1 ORDER BY e.seq DESC LIMIT 1) m ON true
       LEFT JOIN LATERAL (SELECT e.seq FROM bridle_entries e
                           WHERE e.session = s.id AND e.line ~ $2 ORDER BY e.seq DESC LIMIT 1) i ON true
      WHERE s.header IS NOT NULL AND (s.lease_expires IS NULL OR s.lease_expires <= now())
        AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::bigint[]) AS x (id, seq) WHERE x.id = s.id AND x.seq = s.last_seq)
        AND (m.kind = 'turn/start'
             OR (i.seq IS NOT NULL AND (m.seq IS NULL OR (i.seq > m.seq AND m.kind <> 'session/end')))
             OR EXISTS (SELECT 1 FROM bridle_inbox b WHERE b.session = s.id AND b.seq IS NULL))
      ORDER BY s.lease_expires
      LIMIT $5`;
