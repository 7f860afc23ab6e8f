/**
 * A session another worker runs, as this worker serves it to its own clients
 * (ADR 0030): every durable entry relayed from the shared store, in order and
 * once per client, and input forwarded to the owner through the store. It
 * runs nothing and appends nothing: only the lease holder does.
 *
 * The relay reads by seq: on every wake-up (a notification after the owner's
 * commit) and on a timer, it reads the entries past the last one it read and
 * offers them to its attachments, which deduplicate by seq; a client's
 * backlog is read after its attachment subscribed. So a missed wake-up costs
 * latency, never an entry.
 */
import type { Entry } from '../log/entries.js';
import { Attachment, type Peer } from './attachment.js';
import { notification, type SessionSummary, type Snapshot } from './protocol.js';

/** What a relay needs of the store: the server is told nothing of which store it is. */
export interface RelaySource {
  /** The session's lines from `fromSeq` on, as far as they are durable. */
  tail(fromSeq: number): Promise<string[]>;
  /** Calls `wake` when the owner may have committed more; returns the unsubscribe. */
  subscribe(wake: () => void): () => void;
  /** Puts an input in the owner's inbox (durable when this resolves); the forwarded input's handle. */
  forward(text: string, mode: 'followup' | 'steer' | 'inject'): Promise<number>;
  /** The seq the owner logged a forwarded input at; `gone` once the owner's lease has expired with it not logged. */
  logged(handle: number, signal?: AbortSignal): Promise<{ seq: number } | { gone: true }>;
  /** Whether a live worker other than this one holds the session's lease. */
  ownerLive(): Promise<boolean>;
  /** Whether the session's lease was held and has expired: its holder died or stalled (a lease released at rest is not). */
  ownerGone(): Promise<boolean>;
}

/** Every how many reads a relay with clients checks whether the owner's lease has expired (a sweep of the sessions it relays). */
export const OWNER_CHECK_EVERY = 4;

/** Every how long a relay reads again without a wake-up (the net under a missed notification). */
export const RELAY_POLL_MS = 500;

export class RelayedSession {
  private readonly attachments = new Map<Peer, Attachment>();
  private cursor = 0;
  private pulling?: Promise<void>;
  private again = false;
  private closed = false;
  private readonly stopWake: () => void;
  private readonly timer: ReturnType<typeof setInterval>;
  private start?: { cwd: string; model: string };

  constructor(
    readonly id: string,
    readonly source: RelaySource,
    private readonly onProblem: (message: string) => void,
    private readonly onUnused: (s: RelayedSession) => void,
    /** Called when the owner's lease has expired while clients watch: the worker takes the session over. */
    private readonly onOwnerGone: (s: RelayedSession) => void = () => undefined,
  ) {
    this.stopWake = source.subscribe(() => this.pull());
    let ticks = 0;
    this.timer = setInterval(() => {
      void this.pull();
      if (++ticks % OWNER_CHECK_EVERY === 0 && this.attachments.size > 0) {
        void source.ownerGone().then(
          (gone) => gone && !this.closed && this.onOwnerGone(this),
          () => undefined,
        );
      }
    }, RELAY_POLL_MS);
    this.timer.unref?.();
  }

  private serialize = (entry: Entry): string => JSON.stringify(notification('session/entry', { sessionId: this.id, entry }));

  /** Reads what is new and offers it; one read at a time, one more if woken meanwhile. */
  pull(): Promise<void> {
    if (this.closed || this.attachments.size === 0) return Promise.resolve();
    if (this.pulling) {
      this.again = true;
      return this.pulling;
    }
    this.pulling = (async () => {
      try {
        do {
          this.again = false;
          const lines = await this.source.tail(this.cursor + 1);
          for (const line of lines) {
            const entry = JSON.parse(line) as Entry;
            if (entry.seq <= this.cursor) continue;
            this.cursor = entry.seq;
            this.note(entry);
            const text = this.serialize(entry);
            for (const a of this.attachments.values()) a.offer(entry, text);
          }
        } while (this.again && !this.closed);
      } catch (err) {
        this.onProblem(`relaying session ${this.id}: ${String(err)}`);
      } finally {
        this.pulling = undefined;
      }
    })();
    return this.pulling;
  }

  private note(entry: Entry): void {
    if (entry.kind === 'session/start') this.start = { cwd: entry.cwd, model: entry.model };
  }

  attach(peer: Peer, fromSeq: number): { durableSeq: number; start: () => Promise<void> } {
    const a = new Attachment(peer, fromSeq, this.serialize);
    this.attachments.set(peer, a);
    return {
      durableSeq: this.cursor,
      start: async () => {
        if (this.attachments.get(peer) !== a) return;
        // Subscribed above: what the relay reads from now on is buffered, the backlog read after it.
        const backlog = (await this.source.tail(fromSeq)).map((l) => JSON.parse(l) as Entry);
        for (const e of backlog) if (e.kind === 'session/start') this.note(e);
        await a.start(backlog, () => peer.room(), () => {
          peer.send(JSON.stringify(notification('session/state', { sessionId: this.id, value: 'elsewhere', actors: [] })));
        });
        void this.pull();
      },
    };
  }

  /** The attachments, for a worker that takes the session over: each client goes on from the entry after the last it was sent. */
  handOver(): { peer: Peer; next: number }[] {
    return [...this.attachments.values()].map((a) => ({ peer: a.peer, next: a.sentUpTo + 1 }));
  }

  detach(peer: Peer): void {
    this.attachments.delete(peer);
    if (this.attachments.size === 0) this.onUnused(this);
  }

  isAttached(peer: Peer): boolean {
    return this.attachments.has(peer);
  }

  snapshot(): Snapshot {
    return { sessionId: this.id, value: 'elsewhere', actors: [], durableSeq: this.cursor };
  }

  summary(): SessionSummary {
    return { sessionId: this.id, cwd: this.start?.cwd ?? '', model: this.start?.model ?? '', value: 'elsewhere', lastSeq: this.cursor, attached: this.attachments.size };
  }

  /** Stops relaying; the session itself runs on where it runs. Contract: idempotent. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    clearInterval(this.timer);
    this.stopWake();
    this.attachments.clear();
    return Promise.resolve();
  }
}
