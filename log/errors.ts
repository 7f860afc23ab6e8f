/** Named errors of the log. Who is at fault: the log's bytes, not the caller. */
import type { Draft } from './entries.js';
import { codes, TurnEndCode, type CodeOf } from './codes.js';

export class LogCorruptError extends Error {
  constructor(
    /** A stable name for the violation: `bad-json`, `bad-entry`, `unknown-kind`, `seq-gap`, `orphan-result`, … */
    readonly violation: string,
    message: string,
    readonly line?: number,
    readonly seq?: number,
  ) {
    super(message);
    this.name = 'LogCorruptError';
  }
}

/** Why a log cannot be opened as one (`LogAccessError`'s stable `code`). */
export const LogAccessCode = codes({
  LOG_NOT_A_FILE: 'The path names a directory, a FIFO or a device, not a session log.',
  LOG_UNREADABLE: 'The log could not be read.',
  LOG_UNWRITABLE: 'The log, its directory or its lock could not be written.',
});
export type LogAccessCode = CodeOf<typeof LogAccessCode>;

/**
 * A log that cannot be opened as one: who is at fault is the environment (a
 * path that names a directory or a FIFO, a directory bridle may not write).
 * `code` is one of `LogAccessCode`.
 */
export class LogAccessError extends Error {
  constructor(
    readonly code: LogAccessCode,
    message: string,
    /** The system's error code behind it (`ENOENT`, `EACCES`, …), when there is one. */
    readonly sysCode?: string,
  ) {
    super(message);
    this.name = 'LogAccessError';
  }
}

/**
 * An append the recorder could not make: `LOG_ENTRY_REJECTED` (the draft failed its schema: untrusted data
 * reached a draft unchecked, or a harness bug), `LOG_ENTRY_TOO_LARGE` (its line would pass `MAX_ENTRY_BYTES`, past
 * which the log could not be read back; such an error carries no draft, so the closing does not try it again) or `LOG_APPEND_FAILED` (the store threw: disk full, lock lost).
 * Nothing of the entry was recorded. The session ends the running turn with this code (ADR 0012).
 */
export const LogAppendCode = codes({
  LOG_ENTRY_REJECTED: 'The draft failed its schema: untrusted data reached a draft unchecked, or a harness bug.',
  LOG_ENTRY_TOO_LARGE: 'The entry\'s line would pass MAX_ENTRY_BYTES, past which the log could not be read back.',
  LOG_APPEND_FAILED: 'The store threw: disk full, lock lost.',
});
export type LogAppendCode = CodeOf<typeof LogAppendCode>;

export class LogAppendError extends Error {
  /** The entry that was not appended, as drafted: the closing keeps a tool's outcome from it (ADR 0017). */
  readonly draft?: Draft;
  constructor(
    readonly code: LogAppendCode,
    /** The kind of the entry that was not appended. */
    readonly entryKind: string,
    message: string,
    options?: { cause?: unknown; draft?: Draft },
  ) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = 'LogAppendError';
    if (options?.draft) this.draft = options.draft;
  }
}

/**
 * A flush the store could not complete (fsync failed: EIO, ENOSPC; a commit refused): the entries up to
 * `upTo` were written but may not survive. Code `LOG_NOT_DURABLE`; `sysCode` is the system's code behind it,
 * `detail` the store's own message. A turn that meets one ends `error` with this code (ADR 0017).
 */
export class LogNotDurableError extends Error {
  readonly code = TurnEndCode.LOG_NOT_DURABLE;
  constructor(
    /** The last seq the failed flush was to make durable. */
    readonly upTo: number,
    readonly detail: string,
    readonly sysCode?: string,
    options?: { cause?: unknown },
  ) {
    super(`the log could not be saved (entries up to seq ${upTo}): ${detail}`, options);
    this.name = 'LogNotDurableError';
  }
}

/** Whether a code names a failure to save the log (the store refused an append or a flush), not a harness bug. */
export const isSaveFailureCode = (code: string | undefined): boolean => code === TurnEndCode.LOG_NOT_DURABLE || code === LogAppendCode.LOG_APPEND_FAILED;

/** Who holds a session for writing: its process, on which host, since when (real time: a lock is not the log). */
export interface LockHolder {
  pid: number;
  host: string;
  since: string;
}

/**
 * A session another writer holds (docs/design.md §3, one writer per session). Code `SESSION_LOCKED`; who is at fault:
 * the caller, who asked for a session that is in use. `lock` is where the claim lives (a lock file, a lease row).
 */
export class SessionLockedError extends Error {
  readonly code = 'SESSION_LOCKED';
  constructor(
    readonly holder: LockHolder | undefined,
    readonly lock: string,
    reason?: string,
  ) {
    super(
      holder
        ? `session is being written by pid ${holder.pid} on ${holder.host} (since ${holder.since})${reason ? `; ${reason}` : ''}; lock: ${lock}`
        : `session is locked: ${reason ?? 'its lock cannot be read'}; lock: ${lock}`,
    );
    this.name = 'SessionLockedError';
  }
}

/**
 * A log written in an older format than this bridle continues (code `LOG_FORMAT_OLD`): format 1 logged no
 * inputs, so queued input cannot be told from taken, nor a replay time its input (ADR 0021). It can still be
 * read, verified and shown; it cannot be resumed, continued or replayed through the machines.
 */
export class LogFormatError extends Error {
  readonly code = 'LOG_FORMAT_OLD';
  constructor(
    readonly format: number,
    readonly wanted: number,
    what: string,
  ) {
    super(`the log is format ${format}, written by an older bridle; ${what} needs format ${wanted} (it can still be read and verified: bridle replay)`);
    this.name = 'LogFormatError';
  }
}

/**
 * A writer whose lease on a session was taken by another (docs/design.md §3, §10: it paused or was cut off past its
 * lease, and the session was taken over). Code `LEASE_LOST`. The store refuses every later append and flush of
 * that writer: the epoch its commits carry is no longer the session's, so nothing it does now reaches the log.
 */
export class LeaseLostError extends Error {
  readonly code = 'LEASE_LOST';
  constructor(
    /** Where the lease lives (the sessions row), for messages. */
    readonly lock: string,
    /** The epoch this writer held. */
    readonly epoch: number,
    detail: string,
  ) {
    super(`LEASE_LOST: this writer's lease on the session was lost (epoch ${epoch}): ${detail}; lock: ${lock}`);
    this.name = 'LeaseLostError';
  }
}
