/**
 * `bridle replay <session>`: verify a log and print its timeline. Reads only;
 * runs no tool and calls no model. Exit 0 for a clean log, 2 for a corrupt or
 * torn one (a torn tail or an unended turn is "repairable by resume").
 * `--machines` also re-runs the log through the machines with its recorded
 * outcomes and exits 2 unless it comes back byte for byte.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { readLogFile } from '../adapters/store/jsonl-repair.js';
import type { Entry } from '../log/entries.js';
import { verifyLog, type Totals, type Violation } from '../log/verify.js';
import { checkCheckpoints } from '../machines/session-fold.js';
import { UsageError } from './errors.js';
import { bridleHome, logAccessAsUsage } from './home.js';
import { looksLikePath, parseStoredLines, targetOf } from './session-store.js';
import { redactUrl } from '../adapters/store/postgres-pool.js';
import type { ComposedRow } from '../plugins/rows.js';
import { composeStoreRows } from './settings.js';
import { formatMachineVerdict, replayMachines, type MachineVerdict } from './replay-machines.js';
import { formatTotals, timelineLine } from './timeline.js';
import { renderReplayHtml } from '../visualizations/replay-html.js';
import { jsonLine, visible } from './visible.js';
import { forksIn, type ForkRef } from '../adapters/store/jsonl-forks.js';
import { forkOfLog } from '../log/fork.js';
import { dirname } from 'node:path';

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
  /** Found by scanning the JSONL directory's headers; a Postgres store is not scanned. */
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

/** What a crash leaves: `bridle resume` closes it. */
const REPAIRABLE = new Set(['torn-tail', 'open-turn']);
const where = (v: Violation) => (v.seq !== null ? `seq ${v.seq}` : v.line !== undefined ? `line ${v.line}` : 'log');

export async function replayCommand(target: string, flags: ReplayFlags, out: { write(s: string): unknown } = process.stdout): Promise<number> {
  const home = bridleHome();
  // Only the store row, composed as `run` composes it (config.yaml's `store:` among it); a log named by its path is that file.
  const rows: ComposedRow[] = flags.store === undefined && looksLikePath(target) ? [] : await composeStoreRows(flags);
  const stored = targetOf(rows, home, target);
  let path: string;
  let read: ReturnType<typeof verifyFile>;
  if (stored.kind === 'postgres') {
    // A reader: no lease is taken, and a session being written is read as far as it is committed.
    const lines = await stored.store.tail(stored.id);
    path = `${redactUrl(stored.store.url)}#${stored.id}`;
    if (!lines || lines.length === 0) throw new UsageError(`no session ${stored.id} at ${path}`);
    read = verifyLines(lines);
  } else {
    path = stored.path;
    if (!existsSync(path)) throw new UsageError(`no session log at ${path}`);
    try {
      read = verifyFile(path);
    } catch (err) {
      logAccessAsUsage(err);
    }
  }
  const { verdict, entries } = read;
  const start = entries[0];
  const from = forkOfLog(entries);
  // Forks of this session: the logs beside it whose header names it (JSONL), or the store's sessions that do (Postgres).
  const forks = start?.kind !== 'session/start' ? [] : stored.kind === 'jsonl' ? forksIn(dirname(path), start.id) : await stored.store.forks(start.id);
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
