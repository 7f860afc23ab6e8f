/**
 * `bridle serve` as one of many workers on a Postgres store (ADR 0030, 0032):
 * the store's side of relaying a session another worker runs (`RelaySource`),
 * and the owner's inbox pump, which applies what other workers forwarded to a
 * session this worker runs — input, approval answers, cancels, compactions —
 * as its own clients' would be, and settles each with the seq it was logged at.
 */
import type { Pool } from '../adapters/store/postgres-pool.js';
import { MARKER_LINE, type PostgresSessionStore } from '../adapters/store/postgres.js';
import type { Lease } from '../adapters/store/postgres-lease.js';
import { busFor, DELTAS_CHANNEL, ENTRIES_CHANNEL, notify, expiredWithWork, forward, inboxSettled, INBOX_CHANNEL, leaseStatus, SETTLED_CHANNEL, openInbox, refuseInbox, settleInbox, takeInbox, type InboxRow } from '../adapters/store/postgres-workers.js';
import type { Entry } from '../log/entries.js';
import { pendingInputs } from '../log/inputs.js';
import { builtinTools } from '../tools/index.js';
import { presentCall, type ToolLookup } from './render.js';
import type { OpenedLog } from '../ports/store.js';
import type { BridleSession } from '../runtime/session.js';
import { ErrorCode } from '../server/protocol.js';
import type { RelaySource } from '../server/relayed-session.js';
import { packDeltas, unpackDeltas, type Delta } from '../server/delta-wire.js';
import type { DeltaSink } from '../runtime/stream-model.js';

/** How often a forwarding worker looks for its row's settlement, and how long it waits in all. */
const LOGGED_POLL_MS = 20;
const LOGGED_WAIT_MS = 60_000;
/** Every how long the owner looks in the inbox without a wake-up. */
export const INBOX_POLL_MS = 1000;

/** A relayed call is presented by this worker's built-in tools; any other (an MCP server's the owner runs) as `name arguments`, the owner's own fallback. */
let builtins: ToolLookup | undefined;
const present = (name: string, args: string) => presentCall((builtins ??= new Map(builtinTools().map((t) => [t.name, t]))), name, args);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Contract: undefined when the store has no such session; never connects more than the store's pool and the process's one LISTEN connection. */
export async function relaySource(store: PostgresSessionStore, id: string): Promise<RelaySource | undefined> {
  const pool = await store.pool();
  if (!(await leaseStatus(pool, id))) return undefined;
  const bus = busFor(store.url);
  return {
    tail: async (fromSeq) => (await store.tail(id, fromSeq)) ?? [],
    subscribe: (wake) => bus.on(ENTRIES_CHANNEL, (payload) => payload === id && wake()),
    deltas: (live) =>
      bus.on(DELTAS_CHANNEL, (payload) => {
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

/** What the pump needs of a session this worker runs: the session, and the desk its attached clients answer approvals at. */
export interface AdoptedSession {
  readonly bridle: BridleSession;
  readonly desk: { respond(callId: string, outcome: 'allowed-once' | 'rejected', by: string): boolean };
}

/** What the delta publisher needs of a session this worker runs: its id, and its live chunks. */
export interface StreamingSession {
  readonly bridle: { readonly id: string };
  tapDeltas(tap: DeltaSink): () => void;
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
export function startDeltaPublisher(store: PostgresSessionStore, hosted: StreamingSession, onProblem: (m: string) => void): () => void {
  const id = hosted.bridle.id;
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
        for (const p of payloads) await notify(pool, DELTAS_CHANNEL, p);
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

/** How often, and how many times, the pump tries again an answer to a question the log shows open and the desk does not hold yet. */
const DESK_WAIT_MS = 10;
const DESK_WAIT_TRIES = 100;

/** How long the pump waits for the entry an applied row logs (an approval's decision, a cancel) before it settles it as logging nothing. */
const EFFECT_WAIT_MS = 5000;

/**
 * Applies what other workers forwarded to this session, in the inbox's order, as its own clients' would be:
 * an input is logged as the session's input; an approval answer goes to the desk the attached clients answer at
 * (refused `NOT_PENDING` as theirs would be); a cancel or compaction is asked of the session as `session/cancel`
 * asks it. On a wake-up, on a timer, and at once (a session taken over delivers what its dead owner left). Each
 * row is marked taken under this lease before it is applied, and settled with the seq of the entry it logged
 * after (0: it logged nothing, as a cancel with nothing running); a row taken by an earlier owner and not
 * settled is settled from the log when an entry past its mark is its effect, and applied otherwise. Returns the stop.
 */
export function startInboxPump(store: PostgresSessionStore, hosted: AdoptedSession, onProblem: (m: string) => void): () => void {
  const session = hosted.bridle;
  const id = session.id;
  const log = session.recorder.store as OpenedLog;
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  const matched = new Set<number>();
  /** The entry that is a row's effect: its input, its approval's decision, its cancel or compaction. */
  const effectOf = (row: InboxRow) => (x: Entry): boolean => {
    if (matched.has(x.seq)) return false;
    switch (row.kind) {
      case 'input':
        return x.kind === 'session/input' && x.mode === row.mode && x.text === row.text;
      case 'approval':
        return x.kind === 'approval/decided' && x.callId === row.callId;
      case 'cancel':
        return x.kind === 'session/cancel' && x.by === row.by;
      case 'compact':
        return x.kind === 'session/compact' && x.by === row.by;
    }
  };
  /** Whether the log shows the call asked and neither decided nor left behind by its turn's end. */
  const openInLog = (callId: string): boolean => {
    const entries = session.recorder.entries;
    const asked = entries.findLastIndex((e) => e.kind === 'approval/asked' && e.callId === callId);
    return asked >= 0 && !entries.slice(asked + 1).some((e) => (e.kind === 'approval/decided' && e.callId === callId) || e.kind === 'turn/end');
  };
  /** Applies a row; the seq of the entry it logged (durable), 0 for none, or the refusal a local client would get. */
  const apply = async (row: InboxRow): Promise<number | { code: number; reason: string; message: string }> => {
    if (row.kind === 'input') return session.send(row.text, row.mode);
    const rec = session.recorder;
    const isEffect = effectOf(row);
    let off = () => undefined as void;
    const logged = new Promise<number>((resolve) => {
      off = rec.onEntry((e) => isEffect(e) && resolve(e.seq));
    });
    try {
      let done: Promise<unknown>;
      if (row.kind === 'approval') {
        // The client answered on the worker it is attached to there (that worker checked it): answered as an attached client here.
        if (!row.attached) return { code: ErrorCode.NotAttached, reason: 'NOT_ATTACHED', message: `attach to session ${JSON.stringify(id)} (session/attach) before answering its approvals` };
        // The question is durable before the desk holds it (the desk flushes, then waits): an answer that outran it waits a little.
        for (let i = 0; !hosted.desk.respond(row.callId, row.outcome, row.by); i++) {
          if (i >= DESK_WAIT_TRIES || !openInLog(row.callId)) {
            return { code: ErrorCode.NotPending, reason: 'NOT_PENDING', message: `no approval is waiting for ${JSON.stringify(row.callId)} (already answered, cancelled, or never asked)` };
          }
          await sleep(DESK_WAIT_MS);
        }
        done = new Promise((r) => setTimeout(r, EFFECT_WAIT_MS).unref?.());
      } else if (row.kind === 'cancel') {
        // Resolves once the session is idle again, at once when nothing runs (nothing is logged then).
        done = session.cancel(row.by);
      } else {
        // Resolves once the compaction is done (one asked while one runs joins it, and is not logged).
        done = session.compact(row.by);
      }
      const seq = await Promise.race([logged, done.then(() => 0, () => 0)]);
      if (seq > 0) await rec.flush();
      return seq;
    } finally {
      off();
    }
  };
  const once = async (pool: Pool, lease: Lease) => {
    for (const row of await openInbox(pool, id)) {
      if (stopped || lease.lost) return;
      if (row.takenEpoch !== null && row.afterSeq !== null) {
        const isEffect = effectOf(row);
        const e = session.recorder.entries.find((x) => x.seq > row.afterSeq! && isEffect(x));
        if (e) {
          matched.add(e.seq);
          await settleInbox(pool, row.id, e.seq);
          continue;
        }
      }
      await session.recorder.flush();
      if (!(await takeInbox(pool, id, row.id, lease.epoch, session.recorder.lastSeq))) return;
      const r = await apply(row);
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
