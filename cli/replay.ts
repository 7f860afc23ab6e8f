/**
 * `bridle replay <session>`: verify a log and print its timeline. Reads only;
 * runs no tool and calls no model. Exit 0 for a clean log, 2 for a corrupt or
 * torn one (a torn tail or an unended turn is "repairable by resume").
 * `--machines` also re-runs the log through the machines with its recorded
 * outcomes and exits 2 unless it comes back byte for byte.
 */
import { existsSync, writeFileSync } from 'node:fs';
import type { Entry } from '../log/entries.js';
import type { Violation } from '../log/verify.js';
import { UsageError } from './errors.js';
import { bridleHome, logAccessAsUsage } from './home.js';
import { looksLikePath, targetOf } from './session-store.js';
import { verifyFile, verifyLines, type ReplayVerdict } from './verify-log.js';
import { costLabels, costLines, pricesIn } from './cost.js';
import { childReaderOf, childrenOf } from './session-tree.js';
import { costOf, type CostReport } from '../log/cost.js';
import { redactUrl } from '../adapters/store/postgres-pool.js';
import type { ComposedRow } from '../plugins/rows.js';
import { composeProduct, composeStoreRows } from './settings.js';
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
  /**
   * Also show tokens and US dollars per step, turn, session and subagent tree: `bridle cost`'s report of the same
   * logs (ADR 0048). Behind a flag: the prices come from the `prices` row, not from the log.
   */
  cost?: boolean;
}

export { verifyFile, verifyLines, type ReplayVerdict };

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
  let cost: CostReport | undefined;
  if (flags.cost || flags.html) {
    // The page is the viewer, which shows the figures. The same projection as `bridle cost`: the usage the logs hold (the session's and its subagents'), priced with the row.
    const children = await childrenOf(entries, childReaderOf(stored));
    cost = costOf(entries, pricesIn(await composeProduct({ ...(flags.store !== undefined ? { store: flags.store } : {}) })), (id) => children.get(id));
  }
  if (flags.html) {
    writeFileSync(flags.html, renderReplayHtml(entries, lineage, cost));
    process.stderr.write(`html: ${flags.html}\n`);
  }
  // Only a log that verifies is worth re-running: a corrupt one is reported as such.
  const machines: MachineVerdict | undefined = flags.machines && verdict.ok ? await replayMachines(entries) : undefined;
  const ok = verdict.ok && (machines?.identical ?? true);
  if (flags.json) {
    out.write(`${jsonLine({ ...verdict, ok, ...(machines ? { machines } : {}), lineage, ...(cost ? { cost } : {}) })}\n`);
    return ok ? 0 : 2;
  }
  const labels = cost ? costLabels(entries, cost) : new Map<number, string>();
  for (const e of entries) {
    const label = labels.get(e.seq);
    out.write(`${timelineLine(e)}${label ? `  [${visible(label)}]` : ''}\n`);
  }
  out.write(`\n${formatTotals(verdict.totals)}\n`);
  if (cost) out.write(`\ncost:\n${costLines(cost).map((l) => visible(l)).join('\n')}\n\n`);
  for (const l of lineageLines(lineage)) out.write(`${visible(l)}\n`);
  if (verdict.ok) out.write(`ok: ${path} verifies (${verdict.totals.entries} entries)\n`);
  // Violations and differences quote the log, which holds model text.
  else for (const v of verdict.violations) out.write(`${visible(`${REPAIRABLE.has(v.violation) ? 'repairable' : 'corrupt'}: ${v.violation} at ${where(v)}: ${v.message}`)}\n`);
  if (machines) for (const l of formatMachineVerdict(machines, entries.length)) out.write(`${visible(l)}\n`);
  else if (flags.machines) out.write('machines: skipped: the log does not verify\n');
  return ok ? 0 : 2;
}
