/**
 * Reading a log back: every line parsed and validated against its kind's
 * schema. A bad line is an error naming its line; a cut-off last line (no
 * trailing newline, not JSON) is reported as a torn tail, which resume can
 * repair.
 *
 * The parser takes one line at a time (`LogParser`), so a reader can stream a
 * file of any size through it without ever holding the whole text
 * (`adapters/store/jsonl-read.ts`); `parseLog` is the same parser over a
 * string already in memory.
 */
import { ENTRY_KINDS, Entry } from './entries.js';
import { compileCheck, type FastCheck } from './entry-check.js';
import { LogCorruptError } from './errors.js';
import { z } from 'zod';

export interface ParsedLog {
  entries: Entry[];
  /** A torn last line: its 1-based number, its text and, when the reader knows them, its bytes (a cut can split a character). */
  torn?: { line: number; text: string; bytes?: number };
  /** Entries of unknown kinds that were marked ignorable and skipped. */
  skipped: number;
}

const known = new Set<string>(ENTRY_KINDS);
/**
 * Per kind, a check that can say yes without zod's copy (`log/entry-check.ts`); no entry for a kind it cannot judge.
 * The recorder asks it too, before its own `Entry.safeParse` (ADR 0033).
 */
const fast = new Map<string, FastCheck>();
for (const option of Entry.options) {
  const check = compileCheck(option);
  if (check) fast.set(option.shape.kind.value, check);
}
const CR = 13;

/**
 * Contract: true only when zod would accept `value` as an entry *and* hand back an equal value with the same keys
 * in the same order at every depth, so `value` may be kept as the entry; false says nothing (ask zod).
 */
export function isCanonicalEntry(value: { kind?: unknown }): boolean {
  const check = typeof value.kind === 'string' ? fast.get(value.kind) : undefined;
  return check !== undefined && check(value);
}

const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`);

/**
 * The line-by-line reader behind `parseLog`. Feed it every line that ended in
 * `\n` (without the `\n`), then `end()` with the bytes after the last `\n`,
 * if any.
 * Contract: `line` throws `LogCorruptError` naming the line for anything but
 * a valid entry or an ignorable unknown one; `end` returns only entries that
 * passed their schema, in file order.
 */
export class LogParser {
  readonly entries: Entry[] = [];
  skipped = 0;
  /** Lines read so far. */
  lines = 0;

  line(raw: string): void {
    const n = ++this.lines;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw new LogCorruptError('bad-json', `line ${n}: not JSON (${(err as Error).message})`, n);
    }
    // JSON allows a CR before the newline as whitespace; a log's lines end in LF alone.
    if (raw.charCodeAt(raw.length - 1) === CR) throw new LogCorruptError('bad-line-end', `line ${n}: ends in CR LF; log lines end in LF alone`, n);
    this.accept(value, n);
  }

  /**
   * The last line, when the file does not end in `\n`: an entry if it is
   * whole JSON, else a torn tail (`undecodable`: its bytes were cut inside a
   * character, so `text` is only an approximation of them).
   */
  end(last?: { text: string; bytes?: number; undecodable?: boolean }): ParsedLog {
    const out: ParsedLog = { entries: this.entries, skipped: this.skipped };
    if (last === undefined) return out;
    const n = this.lines + 1;
    let value: unknown;
    try {
      if (last.undecodable) throw new Error('cut inside a character');
      value = JSON.parse(last.text);
    } catch {
      out.torn = last.bytes === undefined ? { line: n, text: last.text } : { line: n, text: last.text, bytes: last.bytes };
      return out;
    }
    this.lines = n;
    if (last.text.charCodeAt(last.text.length - 1) === CR) throw new LogCorruptError('bad-line-end', `line ${n}: ends in CR; log lines end in LF alone`, n);
    this.accept(value, n);
    return out;
  }

  private accept(value: unknown, n: number): void {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new LogCorruptError('bad-entry', `line ${n}: ${jsonType(value)}, not an entry object`, n);
    }
    const v = value as { kind?: unknown; ignorable?: unknown; seq?: unknown };
    const kind = v.kind;
    if (typeof kind === 'string' && fast.get(kind)?.(value)) {
      // Exactly what zod would have returned: the same keys, values and order.
      this.entries.push(value as Entry);
      return;
    }
    if (typeof kind !== 'string' || !known.has(kind)) {
      if (v.ignorable === true) {
        this.skipped++;
        return;
      }
      throw new LogCorruptError('unknown-kind', `line ${n}: unknown entry kind ${JSON.stringify(kind)}`, n);
    }
    const r = Entry.safeParse(value);
    if (!r.success) {
      throw new LogCorruptError('bad-entry', `line ${n}: ${kind} entry fails its schema: ${z.prettifyError(r.error)}`, n, typeof v.seq === 'number' ? v.seq : undefined);
    }
    this.entries.push(r.data);
  }
}

/** Contract: returns only entries that passed their schema, in file order; throws `LogCorruptError` for anything else but a torn tail. */
export function parseLog(text: string): ParsedLog {
  const p = new LogParser();
  let from = 0;
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
    p.line(text.slice(from, nl));
    from = nl + 1;
  }
  return p.end(from < text.length ? { text: text.slice(from) } : undefined);
}
