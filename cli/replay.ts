/**
 * `bridle replay <session>`: verify a log and print its timeline. Reads only;
 * runs no tool and calls no model. Exit 0 for a clean log, 2 for a corrupt or
 * torn one (a torn tail or an unended turn is "repairable by resume").
 * `--machines` also re-runs the log through the machines with its recorded
 * outcomes and exits 2 unless it comes back byte for byte.
 */
import { writeFileSync } from 'node:fs';
import type { Entry } from '../log/entries.js';
import type { Violation } from '../log/verdict.js';
import type { ForkRef } from '../ports/store.js';
import { noSession } from '../runtime/logs/open.js';
import { readSessionLog, type ParsedStoredLog } from '../runtime/logs/read.js';
import { looksLikePath, sessionOfRef } from '../runtime/stores.js';
import { UsageError } from './errors.js';
import { bridleHome, logAccessAsUsage } from './home.js';
import { verifyFile, verifyLines, verifyParsed, type ReplayVerdict } from './verify-log.js';
import { childReaderOf, childrenOf } from './session-tree.js';
import { costOf, type CostReport } from '../log/cost.js';
import type { ComposedRow } from '../plugins/rows.js';
import type { MachineVerdict } from './replay-machines.js';
import { formatTotals, timelineLine } from './timeline.js';
import { jsonLine, visible } from './visible.js';
import { forkOfLog } from '../log/fork.js';
import type { OfferedLoop } from '../runtime/loop-identity.js';

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
  /** The product `--machines` (its loop, ADR 0085) and `--cost` (its prices) compose: a profile of `config.yaml`, and a patch file on it. */
  profile?: string;
  patch?: string;
}

/** The flags the product is composed with, as `run` would take them. */
const productFlags = (f: ReplayFlags) => ({ ...(f.store !== undefined ? { store: f.store } : {}), ...(f.profile !== undefined ? { profile: f.profile } : {}), ...(f.patch !== undefined ? { patch: f.patch } : {}) });

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

/** What a crash leaves: `bridle resume` closes it. */
const REPAIRABLE = new Set(['torn-tail', 'open-turn']);
const where = (v: Violation) => (v.seq !== null ? `seq ${v.seq}` : v.line !== undefined ? `line ${v.line}` : 'log');

/** The product's loop, composed as `run` composes it (its modules imported): what a logged loop is compared with. */
async function offeredLoop(flags: ReplayFlags): Promise<OfferedLoop | undefined> {
  const { composeProduct } = await import('./settings.js');
  const { productLoop } = await import('../runtime/loop-identity.js');
  const product = await composeProduct(productFlags(flags));
  return productLoop(product.rows, product.loaded);
}

/*
 * What only a flag uses is imported when that flag is given (ADR 0099): the product and its catalogue (a log named
 * by its path composes none), the machines (--machines), the page (--html), the prices (--cost).
 */
export async function replayCommand(target: string, flags: ReplayFlags, out: { write(s: string): unknown } = process.stdout): Promise<number> {
  const home = bridleHome();
  // Only the store row, composed as `run` composes it (config.yaml's `store:` among it); a log named by its path is that file.
  const rows: ComposedRow[] = flags.store === undefined && looksLikePath(target) ? [] : await (await import('./settings.js')).composeStoreRows(flags);
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
  let cost: CostReport | undefined;
  const costs = flags.cost || flags.html ? await import('./cost.js') : undefined;
  if (costs) {
    // The page is the viewer, which shows the figures. The same projection as `bridle cost`: the usage the logs hold (the session's and its subagents'), priced with the row.
    const children = await childrenOf(entries, childReaderOf(store));
    const { composeProduct } = await import('./settings.js');
    cost = costOf(entries, costs.pricesIn(await composeProduct(productFlags(flags))), (id) => children.get(id));
  }
  if (flags.html) {
    const { renderReplayHtml } = await import('../visualizations/replay-html.js');
    writeFileSync(flags.html, renderReplayHtml(entries, lineage, cost));
    process.stderr.write(`html: ${flags.html}\n`);
  }
  // Only a log that verifies is worth re-running: a corrupt one is reported as such.
  // A log from a replaced loop (ADR 0085) replays through the product's loop row only if it is the same module.
  const loop = flags.machines && verdict.ok && start?.kind === 'session/start' && start.loop ? await offeredLoop(flags) : undefined;
  const replaying = flags.machines && verdict.ok ? await import('./replay-machines.js') : undefined;
  const machines: MachineVerdict | undefined = replaying ? await replaying.replayMachines(entries, loop) : undefined;
  const ok = verdict.ok && (machines?.identical ?? true);
  if (flags.json) {
    out.write(`${jsonLine({ ...verdict, ok, ...(machines ? { machines } : {}), lineage, ...(cost ? { cost } : {}) })}\n`);
    return ok ? 0 : 2;
  }
  const labels = cost && costs ? costs.costLabels(entries, cost) : new Map<number, string>();
  for (const e of entries) {
    const label = labels.get(e.seq);
    out.write(`${timelineLine(e)}${label ? `  [${visible(label)}]` : ''}\n`);
  }
  out.write(`\n${formatTotals(verdict.totals)}\n`);
  if (cost && costs) out.write(`\ncost:\n${costs.costLines(cost).map((l) => visible(l)).join('\n')}\n\n`);
  for (const l of lineageLines(lineage)) out.write(`${visible(l)}\n`);
  if (verdict.ok) out.write(`ok: ${path} verifies (${verdict.totals.entries} entries)\n`);
  // Violations and differences quote the log, which holds model text.
  else for (const v of verdict.violations) out.write(`${visible(`${REPAIRABLE.has(v.violation) ? 'repairable' : 'corrupt'}: ${v.violation} at ${where(v)}: ${v.message}`)}\n`);
  if (machines && replaying) for (const l of replaying.formatMachineVerdict(machines, entries.length)) out.write(`${visible(l)}\n`);
  else if (flags.machines) out.write('machines: skipped: the log does not verify\n');
  return ok ? 0 : 2;
}
