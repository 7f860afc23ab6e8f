/**
 * The relay seam (ADR 0030, 0032, 0034, 0035; ADR 0050): what lets many workers serve one store's sessions.
 * A worker that does not run a session relays it to its clients from the store (`RelaySource`) and forwards
 * what they ask to the worker that does; the owner applies what was forwarded (`adopt`) and sends its live
 * text on; a sweep takes over sessions whose owner died with work left. The server (`server/`) knows only this
 * port; a store that can be shared implements it beside itself (`adapters/store/postgres-relay.ts`).
 */
import type { Chunk } from '../log/chunks.js';
import type { Entry } from '../log/entries.js';
import type { WriterLock } from './store.js';

/** A live model chunk of the step it belongs to (`session/delta`): not logged, not durable. */
export interface Delta {
  step: string;
  chunk: Chunk;
}

/** What a relaying worker forwards to the session's owner, who applies it as its own client's (ADR 0030, 0032). */
export type Forwardable =
  | { kind: 'input'; mode: 'followup' | 'steer' | 'inject'; text: string }
  /** Sent only for a client attached here: the owner answers it as an attached client's. */
  | { kind: 'approval'; callId: string; outcome: 'allowed-once' | 'rejected'; by: string; attached: true }
  | { kind: 'cancel'; by: string }
  | { kind: 'compact'; by: string };

/** The owner's refusal of a forwarded request, as its own client would have been refused (a protocol error code and reason). */
export interface RelayRefusal {
  code: number;
  reason: string;
  message: string;
}

/** How the owner settled what was forwarded: the seq of the entry it logged (0: none), its refusal, or `gone` once its lease expired with it not settled. */
export type ForwardSettled = { seq: number } | { refused: RelayRefusal } | { gone: true };

/** What a relay needs of the store: the server is told nothing of which store it is. */
export interface RelaySource {
  /** The session's lines from `fromSeq` on, as far as they are durable. */
  tail(fromSeq: number): Promise<string[]>;
  /** Hands `live` the owner's live model chunks as they come (best effort: not logged, not durable); returns the unsubscribe. */
  deltas?(live: (d: Delta) => void): () => void;
  /** Calls `wake` when the owner may have committed more; returns the unsubscribe. */
  subscribe(wake: () => void): () => void;
  /** Puts what a client asked in the owner's inbox (durable when this resolves); its handle. */
  forward(f: Forwardable): Promise<number>;
  /** How the owner settled a forwarded row. */
  logged(handle: number, signal?: AbortSignal): Promise<ForwardSettled>;
  /** A call as this worker's tools render it for people (`approval/request.presented`). */
  present(tool: string, args: string): string;
  /** Whether a live worker other than this one holds the session's lease. */
  ownerLive(): Promise<boolean>;
  /** Whether the session's lease was held and has expired: its holder died or stalled (a lease released at rest is not). */
  ownerGone(): Promise<boolean>;
}

/** A session this worker runs, as the owner's duties see it: its log, and how a forwarded request is applied to it. */
export interface OwnedSession {
  readonly id: string;
  /** The claim its log is written under (the store's own lease): forwarded rows are taken under it. */
  claim(): Promise<WriterLock>;
  /** The entries logged so far, in order. */
  entries(): readonly Entry[];
  /** The last seq logged. */
  lastSeq(): number;
  /** Resolves once every entry logged so far is durable. */
  flush(): Promise<void>;
  /** Calls `f` with each entry as it is logged; returns the unsubscribe. */
  onEntry(f: (e: Entry) => void): () => void;
  /** Applies a forwarded request as the session's own client's would be: the seq of the entry it logged (durable; 0 for none), or the refusal. */
  apply(f: Forwardable): Promise<number | RelayRefusal>;
  /** Calls `tap` with each live model chunk; returns the unsubscribe. */
  tapDeltas(tap: (chunk: Chunk, step: string) => void): () => void;
}

/** What the sweep's ask for one session came to (`Hub.sweep`). */
export type SweepOutcome = 'taken' | 'here' | 'lost' | 'full' | 'refused' | 'failed';

/**
 * The relay of a store that many workers share. Contract: every method but `close` may be called by many
 * servers of one process at once (the library's `startServer()`, once per worker); none throws for a session
 * the store does not have; `close` is the embedder's, after its servers have closed.
 */
export interface SessionRelay {
  /** The store's side of relaying session `id`; undefined when the store has no such session. */
  source(id: string): Promise<RelaySource | undefined>;
  /** Whether a live worker holds session `id`'s lease now. */
  ownerLive(id: string): Promise<boolean>;
  /** Starts the owner's duties for a session this worker runs (the inbox of forwarded requests, live text to other workers); returns the stop. */
  adopt(session: OwnedSession, onProblem: (m: string) => void): () => void;
  /** The lease sweep's store side (ADR 0034): one per server, since it remembers what it has looked at. */
  sweep(): { perSweep: number; candidates(limit: number): Promise<string[]>; seen(id: string, outcome: SweepOutcome): void };
  /** Ends the relay's connections (its LISTEN connection). Idempotent. */
  close(): Promise<void>;
}

/**
 * Whether `x` is the entry a forwarded request logs when applied: its input, its approval's decision, its cancel
 * or compaction. Both sides of the port judge by it (the owner waiting for its effect, a later owner settling a
 * row a dead one took), so it is said once, here. Contract: pure.
 */
export function isEffectOf(f: Forwardable, x: Entry): boolean {
  switch (f.kind) {
    case 'input':
      return x.kind === 'session/input' && x.mode === f.mode && x.text === f.text;
    case 'approval':
      return x.kind === 'approval/decided' && x.callId === f.callId;
    case 'cancel':
      return x.kind === 'session/cancel' && x.by === f.by;
    case 'compact':
      return x.kind === 'session/compact' && x.by === f.by;
  }
}
