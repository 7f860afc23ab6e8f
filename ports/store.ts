/** The store seam's port: the sessions store over the contract of `log/store.ts` (`LogStore`, imported from there), as the providers in `adapters/store/` implement it, and the writer's lock. */
import type { LockHolder } from '../log/errors.js';

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

/** A session's log as the store holds it, read without a claim (`SessionStore.read`). */
export interface StoredLog {
  /** Where the log is, as the store names it (a file, `postgres://host/db#id` without a password). */
  readonly location: string;
  /** Every whole line, in order, exactly as the recorder wrote it (each without its newline). */
  readonly lines: string[];
  /**
   * The bytes after the last newline, when the log does not end with one: a torn tail (a write cut off by a
   * crash) or a whole last line whose newline was lost; the parser tells them apart. Only a store that appends
   * bytes (JSONL) can leave one; `undecodable` when the cut split a character.
   */
  readonly last?: { text: string; bytes: number; undecodable: boolean };
}

/** One session as a store lists it (`bridle sessions`): its writer, if any, and the kind of its last marker entry (`log/markers.ts`). */
export interface StoredSession {
  id: string;
  /** The writer holding it now (a JSONL lock a live process listens on; a Postgres lease not expired, by the database's clock). */
  owner?: { pid: number; host: string; since: string; epoch?: number; expires?: string };
  /** Held once, expired since (a Postgres lease): its holder is presumed dead. */
  expired?: { pid: number; host: string; since: string };
  lastSeq: number;
  cwd: string;
  model: string;
  /** The kind of the last turn-or-session marker entry, if any. */
  marker?: string;
  /** When its last entry was written (that entry's `at`), where the store can say it cheaply. */
  updatedAt?: string;
  /** Its first input from the user, cut to a line (`SESSION_TITLE_CHARS`), where the store can say it cheaply. */
  title?: string;
}

/** How long a listed session's `title` may be. */
export const SESSION_TITLE_CHARS = 80;

/** A title for a session from its first input's text: its first line, cut to `SESSION_TITLE_CHARS`. Contract: pure. */
export const titleOf = (text: string): string => {
  const line = text.trim().split('\n', 1)[0]!.trim();
  return line.length > SESSION_TITLE_CHARS ? `${line.slice(0, SESSION_TITLE_CHARS - 1)}…` : line;
};

/**
 * A log of the store that was not listed as it claims, or at all: `LOG_NOT_A_FILE` (a FIFO, a directory named
 * `*.jsonl`), `LOG_UNREADABLE`, or `LOG_ID_MISMATCH` (the header claims another id than the log's name).
 */
export interface ListProblem {
  file: string;
  code: 'LOG_NOT_A_FILE' | 'LOG_UNREADABLE' | 'LOG_ID_MISMATCH';
  message: string;
}

/** A fork of a session (ADR 0029): a log whose header names it in `forkOf`. */
export interface ForkRef {
  id: string;
  /** The original's last seq the fork shares. */
  seq: number;
  /** The fork's log. */
  location: string;
}

/**
 * The `store` service: where sessions' logs live. Everything a host does with a session's log — open it with the
 * claim before the read, repair it, list the sessions, find a session's forks — goes through these methods
 * (`runtime/logs/`), so no host knows which store it has.
 */
export interface SessionStore {
  /** The provider's name (`jsonl`, `memory`, `postgres`). */
  readonly id: string;
  /** Where the store is, for messages: its directory, or its database's URL without a password. */
  readonly location: string;
  /** Where session `id`'s log is or would be, for messages (`<dir>/<id>.jsonl`, `postgres://host/db#id`). Contract: pure. */
  locate(id: string): string;
  /**
   * Opens session `id`'s log for appending, creating it if new, under the writer's claim (one writer per session):
   * `lock`, when the caller already holds it (resume takes it before its repair), else one taken here.
   * `repair` (with `lock`: a repair under a claim the caller keeps): the bytes after the log's last newline are cut
   * off when they are a torn tail, or given their newline when they are a whole line, durably, before anything
   * is appended; and closing this log leaves the claim held, for the session that goes on under it.
   * Contract: throws `SessionLockedError` while another live writer holds the session; closing the log releases the claim.
   */
  open(id: string, o?: { lock?: WriterLock; repair?: boolean }): OpenedLog;
  /**
   * Takes the writer's claim on session `id` ahead of opening it: the lock before the read (resume, `--session`),
   * and the part of opening that a store on the network cannot do synchronously. The claim goes to `open`.
   * Contract: as `AcquireWriterLock`; a claim whose holder is gone (for Postgres, a lease past its expiry) is taken over;
   * a claim made right after this process released the same session is granted, even where the release is still on its
   * way to the store.
   */
  claim(id: string): Promise<WriterLock>;
  /**
   * Session `id`'s lines from `fromSeq` (default 1) on, in seq order, exactly as the recorder wrote them (each
   * without its newline), as far as they are durable; undefined when the store has no such session. A reader:
   * takes no claim. The seam a client attached on another worker catches up through (docs/design.md §10).
   */
  tail(id: string, fromSeq?: number): Promise<string[] | undefined>;
  /**
   * Session `id`'s log whole, with what follows its last newline (`StoredLog.last`); undefined when there is none.
   * A reader. Contract: throws `LogAccessError` for a log that is there but cannot be read (not a regular file), `LogCorruptError` for a whole line that is not UTF-8.
   */
  read(id: string): Promise<StoredLog | undefined>;
  /** Every session of the store (each log beginning with a `session/start`), by id, and what could not be listed. A reader. */
  list(): Promise<{ sessions: StoredSession[]; problems: ListProblem[] }>;
  /** The sessions whose header names `id` in `forkOf` (ADR 0029), by fork point then id. A reader; never throws for a store it can read. */
  forks(id: string): Promise<ForkRef[]>;
  /**
   * Removes session `id`'s log, under the writer's claim taken first (ADR 0063): a log another live writer holds is
   * never removed. Resolves false when the store has no such session. Optional: a store without it cannot delete.
   * Contract: throws `SessionLockedError` (`SESSION_LOCKED`, naming the holder) and removes nothing while another
   * writer holds the session.
   */
  delete?(id: string): Promise<boolean>;
}

/**
 * The codes of a store that cannot be used from here — a database out of reach (`STORE_UNAVAILABLE`), or at a
 * newer schema than this bridle knows (`STORE_SCHEMA_TOO_NEW`): a setup problem (the CLI's exit 1), not a defect
 * of the session. A store says them as an `Error` with that `code` and a message naming where it is.
 */
export const STORE_SETUP_CODES = ['STORE_UNAVAILABLE', 'STORE_SCHEMA_TOO_NEW'] as const;

export const isStoreSetupFailure = (err: unknown): err is Error & { code: (typeof STORE_SETUP_CODES)[number] } =>
  err instanceof Error && (STORE_SETUP_CODES as readonly unknown[]).includes((err as { code?: unknown }).code);
