/**
 * The Postgres store's relay (ADR 0030, 0032, 0034, 0035; the port is `ports/relay.ts`, ADR 0050): the store's
 * side of relaying a session another worker runs (`RelaySource`); the owner's inbox pump, which applies what
 * other workers forwarded to a session this worker runs — input, approval answers, cancels, compactions — as
 * its own clients' would be (the session says how: `OwnedSession.apply`), and settles each with the seq it was
 * logged at; the owner's live text to other workers; and the lease sweep's candidates. Every server of one
 * process shares one LISTEN connection per database.
 */
import type { Pool } from './postgres-pool.js';
import type { PostgresSessionStore } from './postgres.js';
import type { Lease } from './postgres-lease.js';
import { busFor, channelFor, closeBuses, DELTAS_CHANNEL, ENTRIES_CHANNEL, notify, expiredWithWork, forward, inboxSettled, INBOX_CHANNEL, leaseStatus, SETTLED_CHANNEL, openInbox, refuseInbox, settleInbox, takeInbox, type InboxRow } from './postgres-workers.js';
import { packDeltas, unpackDeltas } from './postgres-deltas.js';
import type { Entry } from '../../log/entries.js';
import { pendingInputs } from '../../log/inputs.js';
import { MARKER_LINE } from '../../log/markers.js';
import { isEffectOf, type Delta, type OwnedSession, type RelaySource, type SessionRelay } from '../../ports/relay.js';

/** How often a forwarding worker looks for its row's settlement, and how long it waits in all. */
const LOGGED_POLL_MS = 20;
const LOGGED_WAIT_MS = 60_000;
/**
 * Every how long the owner looks in the inbox without a wake-up (ADR 0061): slow, since a forwarded row's
 * NOTIFY wakes the owner and the pump looks again whenever its LISTEN is (re)established; this is the net
 * under a notification lost otherwise (or sent by a bridle that notified the unsharded channel).
 */
export const INBOX_POLL_MS = 15_000;

/** A call as `name arguments`: how the owner shows a call no tool of its own presents. */
const plainCall = (tool: string, args: string) => `${tool} ${args}`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Contract: undefined when the store has no such session; never connects more than the store's pool and the process's one LISTEN connection. */
export async function relaySource(store: PostgresSessionStore, id: string, present: (tool: string, args: string) => string = plainCall): Promise<RelaySource | undefined> {
  const pool = await store.pool();
  if (!(await leaseStatus(pool, id))) return undefined;
  const bus = busFor(store.url);
  return {
    tail: async (fromSeq) => (await store.tail(id, fromSeq)) ?? [],
    // Woken also whenever the LISTEN is (re)established: what was committed meanwhile is read at once.
    subscribe: (wake) => bus.on(channelFor(ENTRIES_CHANNEL, id), (payload) => payload === id && wake(), wake),
    deltas: (live) =>
      bus.on(channelFor(DELTAS_CHANNEL, id), (payload) => {
        for (const d of unpackDeltas(id, payload)) live(d);
      }),
    forward: (f) => forward(pool, id, f),
    present,
    ownerLive: async () => (await leaseStatus(pool, id))?.live ?? false,
    ownerGone: async () => {
      const l = await leaseStatus(pool, id);
      return l !== undefined && l.owner !== null && !l.live;
    },
    logged: async (handle) => {
      const end = Date.now() + LOGGED_WAIT_MS;
      // The owner's notification after it settles the row wakes this wait; the poll is the net under a missed one.
      let wake = () => undefined as void;
      const off = bus.on(SETTLED_CHANNEL, (payload) => payload === String(handle) && wake());
      try {
        for (let i = 0; ; i++) {
          const woken = new Promise<void>((r) => (wake = r));
          const settled = await inboxSettled(pool, handle);
          if (settled) return settled;
          // Every tenth look: is anyone still there to log it?
          if (i % 10 === 9 && !(await leaseStatus(pool, id))?.live) return { gone: true };
          if (Date.now() > end) throw new Error(`the worker running session ${id} did not settle what was forwarded to it within ${LOGGED_WAIT_MS / 1000} s`);
          await Promise.race([sleep(LOGGED_POLL_MS), woken]);
        }
      } finally {
        off();
      }
    },
  };
}

/** How long the owner gathers a session's live chunks before it sends them on to the other workers (ADR 0035). */
export const DELTA_BATCH_MS = 15;
/** Most batches of one session on their way at once; past that, live text to other workers is left out until they drain. */
const DELTA_BATCHES_IN_FLIGHT = 32;

/**
 * Sends a session's live model chunks to the workers relaying it (ADR 0035): gathered for `DELTA_BATCH_MS`,
 * then one NOTIFY per payload, one batch after another (so they arrive in order). Best effort: a store that is
 * slow or out of reach costs live text on other workers, said once, never the session's own work. Returns the stop.
 */
export function startDeltaPublisher(store: PostgresSessionStore, hosted: OwnedSession, onProblem: (m: string) => void): () => void {
  const id = hosted.id;
  let pending: Delta[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let chain: Promise<void> = Promise.resolve();
  let inFlight = 0;
  let warned = false;
  const send = () => {
    timer = undefined;
    const { payloads } = packDeltas(id, pending);
    pending = [];
    if (inFlight >= DELTA_BATCHES_IN_FLIGHT) return;
    inFlight++;
    chain = chain
      .then(async () => {
        const pool = await store.pool();
        for (const p of payloads) await notify(pool, channelFor(DELTAS_CHANNEL, id), p);
      })
      .catch((err: unknown) => {
        if (!warned) onProblem(`session ${id}: live text to other workers: ${String(err)}`);
        warned = true;
      })
      .finally(() => void inFlight--);
  };
  const off = hosted.tapDeltas((chunk, step) => {
    pending.push({ step, chunk });
    // The stream's end goes at once: its message is about to be logged, and a relay drops chunks that come after it.
    if (chunk.type === 'finish') {
      if (timer) clearTimeout(timer);
      send();
    } else timer ??= setTimeout(send, DELTA_BATCH_MS);
  });
  return () => {
    off();
    if (timer) (clearTimeout(timer), send());
  };
}

/**
 * Applies what other workers forwarded to this session, in the inbox's order, as its own clients' would be
 * (`OwnedSession.apply`). On a wake-up, on a timer, and at once (a session taken over delivers what its dead
 * owner left). Each row is marked taken under this lease before it is applied, and settled with the seq of the
 * entry it logged after (0: it logged nothing, as a cancel with nothing running); a row taken by an earlier
 * owner and not settled is settled from the log when an entry past its mark is its effect, and applied
 * otherwise. Returns the stop.
 */
export function startInboxPump(store: PostgresSessionStore, session: OwnedSession, onProblem: (m: string) => void, o: { pollMs?: number } = {}): () => void {
  const id = session.id;
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  const matched = new Set<number>();
  /** The entry that is a row's effect: its input, its approval's decision, its cancel or compaction. */
  const effectOf = (row: InboxRow) => (x: Entry): boolean => !matched.has(x.seq) && isEffectOf(row, x);
  const once = async (pool: Pool, lease: Lease) => {
    for (const row of await openInbox(pool, id)) {
      if (stopped || lease.lost) return;
      if (row.takenEpoch !== null && row.afterSeq !== null) {
        const isEffect = effectOf(row);
        const e = session.entries().find((x) => x.seq > row.afterSeq! && isEffect(x));
        if (e) {
          matched.add(e.seq);
          await settleInbox(pool, row.id, e.seq);
          continue;
        }
      }
      await session.flush();
      if (!(await takeInbox(pool, id, row.id, lease.epoch, session.lastSeq()))) return;
      const r = await session.apply(row);
      if (typeof r === 'number') {
        if (r > 0) matched.add(r);
        await settleInbox(pool, row.id, r);
      } else await refuseInbox(pool, row.id, r);
    }
  };
  const kick = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      try {
        const pool = await store.pool();
        // This store's own claim: a lease, whose epoch the inbox rows are taken under.
        const lease = (await session.claim()) as Lease;
        do {
          again = false;
          await once(pool, lease);
        } while (again && !stopped);
      } catch (err) {
        if (!stopped) onProblem(`session ${id}: forwarded input: ${String(err)}`);
      } finally {
        running = undefined;
      }
    })();
  };
  // A row forwarded before this worker's LISTEN was in place (or while it was down) was notified to nobody: look when it is.
  const off = busFor(store.url).on(channelFor(INBOX_CHANNEL, id), (payload) => payload === id && kick(), kick);
  const timer = setInterval(kick, o.pollMs ?? INBOX_POLL_MS);
  timer.unref?.();
  kick();
  return () => {
    stopped = true;
    off();
    clearInterval(timer);
  };
}

/** Most sessions one sweep asks for (ADR 0034): a worker that finds many takes them a few at a time. */
export const SWEEP_BATCH = 4;
/** How long a session the sweep found nothing to do for is left out while its log stays as it was (an inbox row may come meanwhile). */
const SWEEP_FORGET_MS = 60_000;

/**
 * The store's side of the lease sweep (ADR 0034): the sessions whose owner's lease expired while they had work
 * left (`expiredWithWork`). A candidate whose only sign of work is an input past its last marker is read, and
 * kept only if `pendingInputs` names one (a steer a `user/message` took is no work). One found without work
 * is left out until its log grows or a minute has passed; one this worker could not open, until its log grows.
 */
export function sweepSource(store: PostgresSessionStore): { candidates(limit: number): Promise<string[]>; seen(id: string, outcome: string): void } {
  const skip = new Map<string, { seq: number; until: number }>();
  const last = new Map<string, number>();
  return {
    async candidates(limit) {
      const now = Date.now();
      for (const [id, s] of skip) if (s.until <= now) skip.delete(id);
      const pool = await store.pool();
      const rows = await expiredWithWork(pool, MARKER_LINE.source, limit, new Map([...skip].map(([id, s]) => [id, s.seq])));
      const out: string[] = [];
      for (const r of rows) {
        last.set(r.id, r.lastSeq);
        if (!r.turnOpen && !r.inbox) {
          const lines = (await store.tail(r.id)) ?? [];
          if (pendingInputs(lines.map((l) => JSON.parse(l) as Entry)).length === 0) {
            skip.set(r.id, { seq: r.lastSeq, until: now + SWEEP_FORGET_MS });
            continue;
          }
        }
        out.push(r.id);
      }
      return out;
    },
    seen(id, outcome) {
      const seq = last.get(id);
      last.delete(id);
      // Not resumable here (its directory, a Ralph run, a corrupt log) stays so until its log changes: said once, not every minute.
      if (outcome === 'refused' && seq !== undefined) skip.set(id, { seq, until: Number.POSITIVE_INFINITY });
      // Failed otherwise (the store out of reach, …): tried again in a minute.
      if (outcome === 'failed' && seq !== undefined) skip.set(id, { seq, until: Date.now() + SWEEP_FORGET_MS });
    },
  };
}

export interface PostgresRelayOptions {
  /** How a relayed call is shown to people (`approval/request.presented`); default `name arguments`, the owner's own fallback. */
  present?: (tool: string, args: string) => string;
}

/**
 * The relay of `store` (a store opened with `notify: true`, so each commit wakes the relays): one for all the
 * servers of a process on that database. Contract: connects only when used; `close` ends the LISTEN
 * connections of the process (call it once every server using it has closed).
 */
export function createPostgresRelay(store: PostgresSessionStore, o: PostgresRelayOptions = {}): SessionRelay {
  const present = o.present ?? plainCall;
  return {
    source: (id) => relaySource(store, id, present),
    ownerLive: async (id) => (await leaseStatus(await store.pool(), id))?.live ?? false,
    adopt(session, onProblem) {
      const stops = [startInboxPump(store, session, onProblem), startDeltaPublisher(store, session, onProblem)];
      return () => stops.forEach((stop) => stop());
    },
    sweep: () => ({ perSweep: SWEEP_BATCH, ...sweepSource(store) }),
    close: closeBuses,
  };
}
