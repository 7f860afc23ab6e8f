/**
 * The one writer of a session log. It stamps each draft with the next `seq`
 * and the injected clock's time, validates it, hands the canonical line to
 * the store, keeps the projection current, and tells listeners — live ones at
 * once, durable ones only after the store has flushed.
 */
import { isoTime, type Clock } from './clock.js';
import type { LogStore } from './store.js';
import { Projection } from './derive-messages.js';
import { Entry, type Draft } from './entries.js';
import { LogAppendError, LogNotDurableError, LogAppendCode } from './errors.js';
import { isCanonicalEntry } from './parse.js';
import { isOverBytes, MAX_ENTRY_BYTES } from './entry-size.js';

export type EntryListener = (entry: Entry) => void;
/** An entry as it is appended, with its line exactly as the store got it (the canonical JSON, no `\n`). */
export type AppendListener = (entry: Entry, line: string) => void;

/**
 * The `flush` of a store whose appends are durable when they return (the
 * memory store). A recorder over such a store releases durable listeners at
 * each append and reports `isDurable`, so the machines skip their flush
 * actors (ADR 0007). It is recognised by identity, not by a flag: a wrapper
 * that replaces `flush` (slower, counted, failing) is never taken for durable.
 */
export const nothingToFlush = async (): Promise<void> => {};

export class Recorder {
  readonly entries: Entry[] = [];
  readonly projection = new Projection();
  private durableSeq = 0;
  private readonly live = new Set<AppendListener>();
  private readonly durable = new Set<EntryListener>();
  private readonly durableOnAppend: boolean;

  constructor(
    readonly store: LogStore,
    private readonly clock: Clock,
    existing: readonly Entry[] = [],
  ) {
    for (const e of existing) {
      this.entries.push(e);
      this.projection.apply(e);
    }
    this.durableSeq = this.lastSeq;
    this.durableOnAppend = store.flush === nothingToFlush;
  }

  get lastSeq(): number {
    return this.entries.length === 0 ? 0 : this.entries[this.entries.length - 1]!.seq;
  }

  /**
   * Contract: synchronous; the entry is in the store's write order when this
   * returns. Throws `LogAppendError` — and records nothing — for a draft that
   * fails its schema (`LOG_ENTRY_REJECTED`), a line over `MAX_ENTRY_BYTES` (`LOG_ENTRY_TOO_LARGE`: the backstop
   * that keeps every log readable, whatever grew past the caps where answers and results arise) or a store that
   * throws (`LOG_APPEND_FAILED`).
   */
  append(draft: Draft): Entry {
    const stamped = { seq: this.lastSeq + 1, at: isoTime(this.clock()), ...draft };
    const entry = isCanonicalEntry(stamped) ? (stamped as Entry) : this.parse(stamped, draft);
    const line = JSON.stringify(entry);
    if (isOverBytes(line)) {
      throw new LogAppendError(LogAppendCode.LOG_ENTRY_TOO_LARGE, draft.kind, `${draft.kind} not appended: its line would pass ${MAX_ENTRY_BYTES} bytes, more than one log entry may hold`);
    }
    try {
      this.store.append(entry, line);
    } catch (err) {
      if (err instanceof LogAppendError) throw err;
      throw new LogAppendError(LogAppendCode.LOG_APPEND_FAILED, draft.kind, `${draft.kind} not appended: ${err instanceof Error ? err.message : String(err)}`, { cause: err, draft });
    }
    this.entries.push(entry);
    this.projection.apply(entry);
    for (const l of this.live) l(entry, line);
    if (this.durableOnAppend) this.release(entry.seq);
    return entry;
  }

  /**
   * The schema's copy of a stamped draft the fast check did not say yes to (keys in another order, or a bad
   * draft): its key order is the canonical line's, so replay compares the same bytes (ADR 0018).
   */
  private parse(stamped: object, draft: Draft): Entry {
    const parsed = Entry.safeParse(stamped);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(entry)'}: ${i.message}`).join('; ');
      throw new LogAppendError(LogAppendCode.LOG_ENTRY_REJECTED, draft.kind, `${draft.kind} rejected by its schema (${issues})`, { cause: parsed.error, draft });
    }
    return parsed.data;
  }

  /**
   * Contract: resolves once every entry appended before the call is durable; durable listeners have then seen
   * them, in order. Rejects with `LogNotDurableError` (and releases nothing) when the store's flush fails.
   */
  async flush(): Promise<void> {
    const upTo = this.lastSeq;
    try {
      await this.store.flush();
    } catch (err) {
      if (err instanceof LogNotDurableError) throw err;
      const code = (err as { code?: unknown } | null)?.code;
      throw new LogNotDurableError(upTo, err instanceof Error ? err.message : String(err), typeof code === 'string' ? code : undefined, { cause: err });
    }
    this.release(upTo);
  }

  private release(upTo: number): void {
    while (this.durableSeq < upTo) {
      const e = this.entries[this.durableSeq]!;
      // entries[i].seq === i + 1 when the log starts at 1; tolerate a log read from elsewhere.
      this.durableSeq = e.seq;
      for (const l of this.durable) l(e);
    }
  }

  /** Whether every appended entry is durable already, so a flush now would wait for nothing. */
  get isDurable(): boolean {
    return this.durableSeq === this.lastSeq;
  }

  get durableUpTo(): number {
    return this.durableSeq;
  }

  /** Every entry as it is appended (not yet durable), with its line: for live display. */
  onEntry(l: AppendListener): () => void {
    this.live.add(l);
    return () => this.live.delete(l);
  }

  /** Every entry once it is durable, in seq order, exactly once: for remote clients. */
  onDurable(l: EntryListener): () => void {
    this.durable.add(l);
    return () => this.durable.delete(l);
  }
}
