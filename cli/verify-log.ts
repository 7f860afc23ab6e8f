/**
 * Reading a log to verify it, from any store: what `bridle replay` prints a
 * verdict for, and what the projections (`bridle cost`, `bridle trace`,
 * `bridle replay --cost`) read through. Apart from replay so the session-tree
 * reader and replay need not import each other.
 */
import type { Entry } from '../log/entries.js';
import { verifyLog } from '../log/verify.js';
import type { Totals, Violation } from '../log/verdict.js';
import { checkCheckpoints } from '../machines/session-fold.js';
import { parseStoredLines, parseStoredLog, unreadable, type ParsedStoredLog } from '../runtime/logs/read.js';
import { LogCorruptError } from '../log/errors.js';
import type { StoredLog } from '../ports/store.js';
import { logFileAt } from '../runtime/stores.js';

export interface ReplayVerdict {
  ok: boolean;
  violations: Violation[];
  totals: Totals;
}

/**
 * Contract: pure apart from reading `path`, line by line; never throws for
 * any file content (only `LogAccessError`, for a path that is not a readable
 * regular file).
 */
export function verifyFile(path: string): { verdict: ReplayVerdict; entries: Entry[] } {
  let log: StoredLog;
  try {
    log = logFileAt(path);
  } catch (err) {
    // A file that is not a log at all (not UTF-8): a violation, not a crash.
    if (err instanceof LogCorruptError) return verifyParsed(unreadable(path, err));
    throw err;
  }
  return verifyParsed(parseStoredLog(log));
}

/** Contract: as `verifyFile`, for a session's lines read from a store's `tail` (whole lines: none is torn). */
export const verifyLines = (lines: readonly string[]): { verdict: ReplayVerdict; entries: Entry[] } => verifyParsed(parseStoredLines(lines));

/** A log as read from any store, verified: its defects (a bad line, a torn tail) and `verifyLog`'s. Contract: pure. */
export function verifyParsed(read: ParsedStoredLog): { verdict: ReplayVerdict; entries: Entry[] } {
  // On a bad line: what precedes it, so the timeline points at where it went wrong.
  const entries = read.entries;
  const found: Violation[] = [];
  if (!read.ok) found.push(...read.violations);
  else if (read.torn) {
    const bytes = read.torn.bytes ?? Buffer.byteLength(read.torn.text);
    found.push({ violation: 'torn-tail', seq: null, line: read.torn.line, message: `torn tail: line ${read.torn.line} was cut off mid-write (${bytes} bytes); repairable by \`bridle resume\`` });
  }
  const v = verifyLog(entries, found.length ? {} : { checkpoints: checkCheckpoints });
  const violations = [...found, ...(read.ok ? v.violations : [])];
  return { verdict: { ok: violations.length === 0, violations, totals: v.totals }, entries };
}
