/**
 * A session's log read through the store port and parsed: the one reading every host does (replay, resume,
 * `--session`, a server's preflight, trace), whatever the store. A reader: takes no claim.
 */
import type { Entry } from '../../log/entries.js';
import { LogCorruptError } from '../../log/errors.js';
import { LogParser, type ParsedLog } from '../../log/parse.js';
import type { Violation } from '../../log/verdict.js';
import type { SessionStore, StoredLog } from '../../ports/store.js';

/** A log parsed: its entries (on a bad line, those before it), the torn tail it ends in, or the violation that stopped it. */
export type ParsedStoredLog =
  | { ok: true; location: string; entries: Entry[]; lines: string[]; torn?: ParsedLog['torn']; skipped: number }
  | { ok: false; location: string; entries: Entry[]; violations: Violation[] };

/** Contract: pure; never throws for any content (a bad line is a violation naming it, with the entries before it). */
export function parseStoredLog(log: StoredLog): ParsedStoredLog {
  const parser = new LogParser();
  try {
    for (const l of log.lines) parser.line(l);
    const end = parser.end(log.last);
    // The lines that are entries: a whole last line that lost its newline is one of them.
    const lines = log.last && !end.torn ? [...log.lines, log.last.text] : log.lines;
    return { ok: true, location: log.location, entries: end.entries, lines, skipped: end.skipped, ...(end.torn ? { torn: end.torn } : {}) };
  } catch (err) {
    if (!(err instanceof LogCorruptError)) throw err;
    const v: Violation = { violation: err.violation, seq: err.seq ?? null, message: err.message };
    if (err.line !== undefined) v.line = err.line;
    return { ok: false, location: log.location, entries: parser.entries, violations: [v] };
  }
}

/** Lines as a store's `tail` gives them, parsed (none is torn). Contract: as `parseStoredLog`. */
export const parseStoredLines = (lines: readonly string[], location = ''): ParsedStoredLog => parseStoredLog({ location, lines: [...lines] });

/** A log the store could not even split into lines (a whole line that is not UTF-8), as a parse that stopped there. */
export function unreadable(location: string, err: LogCorruptError): ParsedStoredLog {
  const v: Violation = { violation: err.violation, seq: err.seq ?? null, message: err.message };
  if (err.line !== undefined) v.line = err.line;
  return { ok: false, location, entries: [], violations: [v] };
}

/**
 * A log that holds no line and no torn tail was never committed: a store that claims a session before its first
 * commit (Postgres) keeps its row through a kill before that commit. Nothing of it ran, so every reader and repair
 * takes it as a session the store does not have.
 */
export const holdsNothing = (log: StoredLog): boolean => log.lines.length === 0 && !log.last;

/**
 * Session `id`'s log, parsed; undefined when the store has none or holds nothing of it (`holdsNothing`). Contract: throws only what `SessionStore.read` throws besides `LogCorruptError`
 * (`LogAccessError` for a log that is not a readable file, the store's error when it cannot be reached).
 */
export async function readSessionLog(store: SessionStore, id: string): Promise<ParsedStoredLog | undefined> {
  let log: StoredLog | undefined;
  try {
    log = await store.read(id);
  } catch (err) {
    if (err instanceof LogCorruptError) return unreadable(store.locate(id), err);
    throw err;
  }
  return log && !holdsNothing(log) ? parseStoredLog(log) : undefined;
}
