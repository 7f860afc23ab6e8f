/**
 * `bridle serve` as one of many workers on a Postgres store (ADR 0030): the
 * store's side of relaying a session another worker runs (`RelaySource`), and
 * the owner's inbox pump, which logs the input other workers forwarded to a
 * session this worker runs.
 */
import type { Pool } from '../adapters/store/postgres-pool.js';
import type { PostgresSessionStore } from '../adapters/store/postgres.js';
import type { Lease } from '../adapters/store/postgres-lease.js';
import { busFor, ENTRIES_CHANNEL, forwardInput, inboxSeq, INBOX_CHANNEL, leaseStatus, openInbox, settleInbox, takeInbox } from '../adapters/store/postgres-workers.js';
import type { OpenedLog } from '../ports/store.js';
import type { BridleSession } from '../runtime/session.js';
import type { RelaySource } from '../server/relayed-session.js';

/** How often a forwarding worker looks for its input's seq, and how long it waits in all. */
const LOGGED_POLL_MS = 20;
const LOGGED_WAIT_MS = 60_000;
/** Every how long the owner looks in the inbox without a wake-up. */
export const INBOX_POLL_MS = 1000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Contract: undefined when the store has no such session; never connects more than the store's pool and the process's one LISTEN connection. */
export async function relaySource(store: PostgresSessionStore, id: string): Promise<RelaySource | undefined> {
  const pool = await store.pool();
  if (!(await leaseStatus(pool, id))) return undefined;
  const bus = busFor(store.url);
  return {
    tail: async (fromSeq) => (await store.tail(id, fromSeq)) ?? [],
    subscribe: (wake) => bus.on(ENTRIES_CHANNEL, (payload) => payload === id && wake()),
    forward: (text, mode) => forwardInput(pool, id, mode, text),
    ownerLive: async () => (await leaseStatus(pool, id))?.live ?? false,
    ownerGone: async () => {
      const l = await leaseStatus(pool, id);
      return l !== undefined && l.owner !== null && !l.live;
    },
    logged: async (handle) => {
      const end = Date.now() + LOGGED_WAIT_MS;
      for (let i = 0; ; i++) {
        const seq = await inboxSeq(pool, handle);
        if (seq !== undefined) return { seq };
        // Every tenth look: is anyone still there to log it?
        if (i % 10 === 9 && !(await leaseStatus(pool, id))?.live) return { gone: true };
        if (Date.now() > end) throw new Error(`the worker running session ${id} did not log the forwarded input within ${LOGGED_WAIT_MS / 1000} s`);
        await sleep(LOGGED_POLL_MS);
      }
    },
  };
}

/**
 * Logs, as this session's own input, what other workers forwarded to it: on a wake-up, on a timer, and at once
 * (a session taken over delivers what its dead owner left). Each row is marked taken under this lease before it
 * is logged, and settled with its seq after; a row taken by an earlier owner and not settled is settled from the
 * log when a `session/input` past its mark has its mode and text, and delivered otherwise. Returns the stop.
 */
export function startInboxPump(store: PostgresSessionStore, session: BridleSession, onProblem: (m: string) => void): () => void {
  const id = session.id;
  const log = session.recorder.store as OpenedLog;
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  const matched = new Set<number>();
  const once = async (pool: Pool, lease: Lease) => {
    for (const row of await openInbox(pool, id)) {
      if (stopped || lease.lost) return;
      if (row.takenEpoch !== null && row.afterSeq !== null) {
        const e = session.recorder.entries.find((x) => x.kind === 'session/input' && x.seq > row.afterSeq! && x.mode === row.mode && x.text === row.text && !matched.has(x.seq));
        if (e) {
          matched.add(e.seq);
          await settleInbox(pool, row.id, e.seq);
          continue;
        }
      }
      await session.recorder.flush();
      if (!(await takeInbox(pool, id, row.id, lease.epoch, session.recorder.lastSeq))) return;
      const seq = await session.send(row.text, row.mode);
      matched.add(seq);
      await settleInbox(pool, row.id, seq);
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
        const lease = (log.lock ?? (await log.ready)) as Lease;
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
  const off = busFor(store.url).on(INBOX_CHANNEL, (payload) => payload === id && kick());
  const timer = setInterval(kick, INBOX_POLL_MS);
  timer.unref?.();
  kick();
  return () => {
    stopped = true;
    off();
    clearInterval(timer);
  };
}
