/**
 * `bridle replay <session>`: verify a log and print its timeline. Reads only;
 * runs no tool and calls no model. Exit 0 for a clean log, 2 for a corrupt or
 * torn one (a torn tail or an unended turn is "repairable by resume").
 * `--machines` also re-runs the log through the machines with its recorded
 * outcomes and exits 2 unless it comes back byte for byte.
 */
import { writeFileSync } from 'node:fs';
import type { Entry } from '../log/entries.js';
import { verifyLog, type Totals, type Violation } from '../log/verify.js';
import { checkCheckpoints } from '../machines/session-fold.js';
import type { ForkRef, StoredLog } from '../ports/store.js';
import { noSession } from '../runtime/logs/open.js';
import { parseStoredLines, parseStoredLog, readSessionLog, unreadable, type ParsedStoredLog } from '../runtime/logs/read.js';
import { LogCorruptError } from '../log/errors.js';
import { logFileAt, looksLikePath, sessionOfRef } from '../runtime/stores.js';
import { UsageError } from './errors.js';
import { bridleHome, logAccessAsUsage } from './home.js';
import type { ComposedRow } from '../plugins/rows.js';
import { composeStoreRows } from './settings.js';
import { formatMachineVerdict, replayMachines, type MachineVerdict } from './replay-machines.js';
import { formatTotals, timelineLine } from './timeline.js';
import { renderReplayHtml } from '../visualizations/replay-html.js';
import { jsonLine, visible } from './visible.js';
import { forkOfLog } from '../log/fork.js';

export interface ReplayFlags {
  json?: boolean;
  /** Where the session lives: a postgres:// URL, or the JSONL directory (default `$BRIDLE_HOME/sessions`). */
  store?: string;
  /** Also write the session as one self-contained HTML page with a slider (the viewer, offline). */
  html?: string;
  /** Also re-run the log through the machines with its recorded outcomes and compare the bytes (I12). */
  machines?: boolean;
}

export interface ReplayVerdict {
  ok: boolean;
  violations: Violation[];
  totals: Totals;
}

/** A session's lineage (ADR 0029): what its header says it was forked from, and the logs beside it forked from it. */
export interface Lineage {
  forkedFrom?: { session: string; seq: number };
  /** The store's sessions whose header names this one in `forkOf`. */
  forks: ForkRef[];
}

/** The lines `bridle replay` prints for a lineage; none for a session that is neither a fork nor forked. */
export function lineageLines(l: Lineage): string[] {
  const out: string[] = [];
  if (l.forkedFrom) out.push(`forked from: ${l.forkedFrom.session} at seq ${l.forkedFrom.seq}`);
  if (l.forks.length) out.push(`forks of this session: ${l.forks.map((f) => `${f.id} (at seq ${f.seq})`).join(', ')}`);
  return out;
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

/** What a crash leaves: `bridle resume` closes it. */
const REPAIRABLE = new Set(['torn-tail', 'open-turn']);
const where = (v: Violation) => (v.seq !== null ? `seq ${v.seq}` : v.line !== undefined ? `line ${v.line}` : 'log');

export async function replayCommand(target: string, flags: ReplayFlags, out: { write(s: string): unknown } = process.stdout): Promise<number> {
  const home = bridleHome();
  // Only the store row, composed as `run` composes it (config.yaml's `store:` among it); a log named by its path is that file.
  const rows: ComposedRow[] = flags.store === undefined && looksLikePath(target) ? [] : await composeStoreRows(flags);
  const { store, id } = sessionOfRef(rows, home, target);
  // A reader: no claim is taken, and a session being written is read as far as it is durable.
  let parsed: ParsedStoredLog | undefined;
  try {
    parsed = await readSessionLog(store, id);
  } catch (err) {
    logAccessAsUsage(err);
  }
  if (!parsed) throw new UsageError(noSession(store, id).message);
  const path = parsed.location;
  const read = verifyParsed(parsed);
  const { verdict, entries } = read;
  const start = entries[0];
  const from = forkOfLog(entries);
  // Forks of this session: the store's sessions whose header names it.
  const forks = start?.kind !== 'session/start' ? [] : await store.forks(start.id);
  const lineage: Lineage = { ...(from ? { forkedFrom: from } : {}), forks };
  if (flags.html) {
    writeFileSync(flags.html, renderReplayHtml(entries, lineage));
    process.stderr.write(`html: ${flags.html}\n`);
  }
  // Only a log that verifies is worth re-running: a corrupt one is reported as such.
  const machines: MachineVerdict | undefined = flags.machines && verdict.ok ? await replayMachines(entries) : undefined;
  const ok = verdict.ok && (machines?.identical ?? true);
  if (flags.json) {
    out.write(`${jsonLine({ ...verdict, ok, ...(machines ? { machines } : {}), lineage })}\n`);
    return ok ? 0 : 2;
  }
  for (const e of entries) out.write(`${timelineLine(e)}\n`);
  out.write(`\n${formatTotals(verdict.totals)}\n`);
  for (const l of lineageLines(lineage)) out.write(`${visible(l)}\n`);
  if (verdict.ok) out.write(`ok: ${path} verifies (${verdict.totals.entries} entries)\n`);
  // Violations and differences quote the log, which holds model text.
  else for (const v of verdict.violations) out.write(`${visible(`${REPAIRABLE.has(v.violation) ? 'repairable' : 'corrupt'}: ${v.violation} at ${where(v)}: ${v.message}`)}\n`);
  if (machines) for (const l of formatMachineVerdict(machines, entries.length)) out.write(`${visible(l)}\n`);
  else if (flags.machines) out.write('machines: skipped: the log does not verify\n');
  return ok ? 0 : 2;
}
