/**
 * Reading a log back: every line parsed and validated against its kind's
 * schema. A bad line is an error naming its line; a cut-off last line (no
 * trailing newline, not JSON) is reported as a torn tail, which resume can
 * repair.
 */
import { ENTRY_KINDS, Entry } from './entries.js';
import { LogCorruptError } from './errors.js';
import { z } from 'zod';

export interface ParsedLog {
  entries: Entry[];
  /** A torn last line: its 1-based number and its bytes. */
  torn?: { line: number; text: string };
  /** Entries of unknown kinds that were marked ignorable and skipped. */
  skipped: number;
}

const known = new Set<string>(ENTRY_KINDS);

/** Contract: returns only entries that passed their schema, in file order; throws `LogCorruptError` for anything else but a torn tail. */
export function parseLog(text: string): ParsedLog {
  const lines = text.split('\n');
  const endsClean = text.length === 0 || text.endsWith('\n');
  if (endsClean) lines.pop();
  const entries: Entry[] = [];
  let skipped = 0;
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const raw = lines[i]!;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      if (!endsClean && i === lines.length - 1) return { entries, torn: { line: n, text: raw }, skipped };
      throw new LogCorruptError('bad-json', `line ${n}: not JSON (${(err as Error).message})`, n);
    }
    const kind = (value as { kind?: unknown } | null)?.kind;
    if (typeof kind !== 'string' || !known.has(kind)) {
      if ((value as { ignorable?: unknown }).ignorable === true) {
        skipped++;
        continue;
      }
      throw new LogCorruptError('unknown-kind', `line ${n}: unknown entry kind ${JSON.stringify(kind)}`, n);
    }
    const r = Entry.safeParse(value);
    if (!r.success) {
      const seq = (value as { seq?: unknown }).seq;
      throw new LogCorruptError('bad-entry', `line ${n}: ${kind} entry fails its schema: ${z.prettifyError(r.error)}`, n, typeof seq === 'number' ? seq : undefined);
    }
    entries.push(r.data);
  }
  return { entries, skipped };
}
