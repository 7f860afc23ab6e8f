/** The store seam's port: the contract of `log/store.ts`, as the providers in `adapters/store/` implement it, and the writer's lock. */
import type { LockHolder } from '../log/errors.js';

export type { LogStore } from '../log/store.js';
export type { LockHolder } from '../log/errors.js';

/**
 * One writer per session (docs/design.md §3): the claim a process holds on a session
 * while it appends to it. The JSONL provider keeps it in a lock file beside
 * the log (`adapters/store/jsonl-lock.ts`); a Postgres provider keeps a lease
 * whose epoch every append checks (a later issue). Readers (replay, the
 * viewer, `attach`) never take one.
 */
export interface WriterLock {
  /** Where the claim lives (the lock file, the lease row), for messages. */
  readonly location: string;
  /** This process's claim. */
  readonly holder: LockHolder;
  /**
   * The claim this one replaced: its holder was gone (for JSONL, a dead pid on
   * this host). Whoever writes the session next logs it as `session/takeover`.
   */
  readonly tookOver?: LockHolder;
  /** Contract: idempotent; never throws. A claim is also released when the process exits. */
  release(): void;
}

/**
 * Takes the writer's claim on the session whose log is at `location`.
 * Contract: returns a held lock, or throws `SessionLockedError`
 * (`SESSION_LOCKED`, naming the holder) while another live writer holds it,
 * or `LogAccessError` (`LOG_UNWRITABLE`) when the claim cannot be written.
 * A claim whose holder is gone is taken over, never waited for.
 */
export type AcquireWriterLock = (location: string) => WriterLock;

import type { LogStore } from '../log/store.js';

/** A session's log opened for writing, with the writer's claim on it when the store keeps one. */
export interface OpenedLog extends LogStore {
  /** Held until the log is closed; says whether it replaced a stale claim (`tookOver`). */
  readonly lock?: WriterLock;
  /**
   * Set by a store whose claim is asynchronous (Postgres) when `open` was given no lock: the claim taken in the
   * background. Appends are accepted meanwhile and every flush waits for it, failing with its error; a caller
   * that can wait awaits it before anything runs, so a held session is refused before a model is asked.
   * Contract: rejects with `SessionLockedError` while another live writer holds the session, or with the
   * store's error when it cannot be reached.
   */
  readonly ready?: Promise<WriterLock>;
}

/** The `store` service: where sessions' logs live. */
export interface SessionStore {
  /** The provider's name (`jsonl`, `memory`). */
  readonly id: string;
  /**
   * Opens session `id`'s log for appending, creating it if new, under the writer's claim (one writer per session):
   * `lock`, when the caller already holds it (resume takes it before its repair), else one taken here.
   * Contract: throws `SessionLockedError` while another live writer holds the session; closing the log releases the claim.
   */
  open(id: string, o?: { lock?: WriterLock }): OpenedLog;
  /**
   * Takes the writer's claim on session `id` ahead of opening it: the lock before the read (resume, `--session`),
   * and the part of opening that a store on the network cannot do synchronously. The claim goes to `open`.
   * Contract: as `AcquireWriterLock`; a claim whose holder is gone (for Postgres, a lease past its expiry) is taken over.
   */
  claim?(id: string): Promise<WriterLock>;
  /**
   * Session `id`'s lines from `fromSeq` (default 1) on, in seq order, exactly as the recorder wrote them (each
   * without its newline), as far as they are durable; undefined when the store has no such session. A reader:
   * takes no claim. The seam a client attached on another worker catches up through (docs/design.md §10).
   */
  tail?(id: string, fromSeq?: number): Promise<string[] | undefined>;
}
