/**
 * `bridle cost <session>`: what a stored session cost — tokens and US
 * dollars per step, per turn, per session and for its whole subagent tree —
 * priced with the product's `prices` row (list prices with their date;
 * `bundles/prices.ts`, overridable in config). A scripted model's usage is
 * labelled as such and costs nothing; a model the table does not name is
 * unpriced, never guessed.
 */
import { costOf, type CostReport, type Tokens } from '../log/cost.js';
import type { PriceTable } from '../log/entries-budget.js';
import type { Entry } from '../log/entries.js';
import { PricesConfig } from '../runtime/builtins.js';
import { readSessionTree } from './session-tree.js';
import { composeProduct, type Product, type SettingFlags } from './settings.js';
import { jsonLine, visible } from './visible.js';

export interface CostFlags extends Pick<SettingFlags, 'store' | 'profile' | 'patch'> {
  json?: boolean;
}

export const usd = (v: number | undefined) => (v === undefined ? '?' : v === 0 ? '$0' : `$${v < 0.01 ? v.toFixed(6) : v.toFixed(4)}`);
const cols = (label: string, model: string, t: Tokens, cost: string) =>
  [label.padEnd(14), model.padEnd(26), String(t.input).padStart(9), String(t.cached).padStart(9), String(t.cacheWrite).padStart(9), String(t.output).padStart(8), String(t.reasoning).padStart(9), cost.padStart(11)].join(' ');

export function costLines(r: CostReport): string[] {
  const out = [cols('step', 'model', { input: 'input', cached: 'cached', cacheWrite: 'cache-w', output: 'output', reasoning: 'reasoning' } as unknown as Tokens, 'cost')];
  for (const s of r.sessions) {
    if (s.depth > 0) out.push(`subagent ${s.session} (depth ${s.depth})`);
    for (const step of r.steps.filter((x) => x.session === s.session)) out.push(cols(step.step, step.scripted ? `${step.model.slice(0, 16)} (scripted)` : step.model, step.tokens, step.scripted ? '$0' : usd(step.usd)));
    for (const t of r.turns.filter((x) => x.session === s.session)) out.push(cols(`${t.turn} total`, '', t.tokens, usd(t.usd)));
    out.push(cols(s.depth > 0 ? 'subagent' : 'session', '', s.tokens, usd(s.usd)));
  }
  if (r.sessions.length > 1) out.push(cols('tree', '', r.total.tokens, usd(r.total.usd)));
  const notes = [`prices as of ${r.asOf}, US dollars, list prices (override the prices row to change them)`];
  if (r.steps.some((s) => s.scripted)) notes.push('a scripted model reports its usage as written in its script and costs nothing');
  if (r.total.unpriced.length) notes.push(`no price for ${r.total.unpriced.join(', ')}: its cost is ? (add it to the prices row)`);
  return [...out, '', ...notes];
}

/** One step's or turn's figures on one line, as `bridle replay --cost` prints them beside its entry. */
export function costLabel(t: Tokens, cost: number | undefined, scripted: boolean): string {
  const cache = [t.cached ? `cached ${t.cached}` : '', t.cacheWrite ? `cache-w ${t.cacheWrite}` : ''].filter(Boolean).join(', ');
  return `in ${t.input}${cache ? ` (${cache})` : ''} · out ${t.output}${t.reasoning ? ` (reasoning ${t.reasoning})` : ''} · ${scripted ? 'scripted, $0' : usd(cost)}`;
}

/**
 * Contract: pure; the label each root-session `assistant/message` (its step)
 * and `turn/end` (its turn) of `entries` gets, by seq, read off `report`
 * (`costOf` of the same entries): the figures are the report's, not computed again.
 */
export function costLabels(entries: readonly Entry[], report: CostReport): Map<number, string> {
  const start = entries[0];
  const out = new Map<number, string>();
  if (start?.kind !== 'session/start') return out;
  const steps = report.steps.filter((s) => s.session === start.id);
  const scriptedTurns = new Set(steps.filter((s) => s.scripted).map((s) => s.turn));
  let i = 0;
  for (const e of entries) {
    if (e.kind === 'assistant/message') {
      const s = steps[i++];
      if (s) out.set(e.seq, `step: ${costLabel(s.tokens, s.usd, s.scripted)}`);
    } else if (e.kind === 'turn/end') {
      const t = report.turns.find((x) => x.session === start.id && x.turn === e.turn);
      if (t) out.set(e.seq, `turn: ${costLabel(t.tokens, t.usd, scriptedTurns.has(t.turn) && t.usd === 0)}`);
    }
  }
  return out;
}

/** A product's `prices` row (the shipped list prices unless config overrides them): every host prices usage with this one table. */
export function pricesIn(product: Pick<Product, 'rows'>): PriceTable {
  return PricesConfig.parse(product.rows.find((r) => r.id === 'prices')?.config ?? {});
}

export async function costCommand(ref: string, flags: CostFlags, out: { write(s: string): unknown } = process.stdout): Promise<number> {
  const product = await composeProduct(flags);
  const prices = pricesIn(product);
  const tree = await readSessionTree(ref, product.rows.filter((r) => r.id === 'store'));
  if (!tree.verifies) process.stderr.write(`bridle: warning: ${visible(ref)} does not verify; costed as far as it reads (bridle replay says why)\n`);
  const report = costOf(tree.entries, prices, (id) => tree.children.get(id));
  if (flags.json) out.write(`${jsonLine(report)}\n`);
  else for (const l of costLines(report)) out.write(`${visible(l)}\n`);
  return 0;
}
