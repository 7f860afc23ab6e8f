/**
 * Reading a log to verify it, from a file or a store's lines: what `bridle
 * replay` prints a verdict for, and what the projections (`bridle cost`,
 * `bridle trace`) read through.
 */
import { readLogFile } from '../adapters/store/jsonl-repair.js';
import type { Entry } from '../log/entries.js';
import { verifyLog, type Totals, type Violation } from '../log/verify.js';
import { checkCheckpoints } from '../machines/session-fold.js';
import { parseStoredLines } from './session-store.js';

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
  const read = readLogFile(path);
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

/** Contract: as `verifyFile`, for a session's lines read from a store (a Postgres session's are whole: none is torn). */
export function verifyLines(lines: readonly string[]): { verdict: ReplayVerdict; entries: Entry[] } {
  const read = parseStoredLines(lines);
  const v = verifyLog(read.entries, read.ok ? { checkpoints: checkCheckpoints } : {});
  const violations = read.ok ? v.violations : read.violations;
  return { verdict: { ok: violations.length === 0, violations, totals: v.totals }, entries: read.entries };
}

