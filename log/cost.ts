/**
 * What a run cost: a projection of the log, as the model's messages and the
 * trace are. `costOf(entries, prices)` reads every `assistant/message`'s
 * usage — per step, per turn, for the session, and with `children` for its
 * whole subagent tree — and prices it with a table of list prices (US
 * dollars per million tokens). The usage is what the provider reported;
 * `inputTokens` is every input token, the cache's shares within it.
 */
import type { Entry } from './entries.js';
import type { Price, PriceTable } from './entries-budget.js';
import type { Usage } from './entry-values.js';

export interface Tokens {
  input: number;
  cached: number;
  cacheWrite: number;
  output: number;
  reasoning: number;
}
export interface CostLine {
  session: string;
  turn: string;
  step: string;
  model: string;
  tokens: Tokens;
  /** US dollars; `undefined` when the table has no price for the model. A scripted model costs 0. */
  usd: number | undefined;
  scripted: boolean;
}
export interface CostReport {
  steps: CostLine[];
  /** By session id (the root and each subagent), then by turn. */
  turns: { session: string; turn: string; tokens: Tokens; usd: number | undefined }[];
  sessions: { session: string; depth: number; tokens: Tokens; usd: number | undefined }[];
  total: { tokens: Tokens; usd: number | undefined; unpriced: string[] };
  asOf: string;
}

const zero = (): Tokens => ({ input: 0, cached: 0, cacheWrite: 0, output: 0, reasoning: 0 });
const add = (a: Tokens, b: Tokens): Tokens => ({ input: a.input + b.input, cached: a.cached + b.cached, cacheWrite: a.cacheWrite + b.cacheWrite, output: a.output + b.output, reasoning: a.reasoning + b.reasoning });
const addUsd = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : a + b);
export const tokensOf = (u: Usage | undefined): Tokens =>
  u ? { input: u.inputTokens, cached: u.cachedTokens ?? 0, cacheWrite: u.cacheWriteTokens ?? 0, output: u.outputTokens, reasoning: u.reasoningTokens ?? 0 } : zero();

/** A scripted model's usage is labelled so (its name starts `scripted`) and costs nothing. */
export const isScripted = (model: string): boolean => model.startsWith('scripted');

/** The table's price for a model id: exactly, else the longest name it starts with (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`). */
export function priceFor(table: PriceTable, model: string): Price | undefined {
  if (table.models[model]) return table.models[model];
  let best: string | undefined;
  for (const k of Object.keys(table.models)) if (model.startsWith(k) && (!best || k.length > best.length)) best = k;
  return best ? table.models[best] : undefined;
}

/** Contract: pure; dollars for one call's tokens. Cached and cache-write tokens are priced apart when the table says how, else as input. */
export function usdOf(t: Tokens, p: Price): number {
  const plain = Math.max(0, t.input - t.cached - t.cacheWrite);
  return (plain * p.input + t.cached * (p.cachedInput ?? p.input) + t.cacheWrite * (p.cacheWrite ?? p.input) + t.output * p.output) / 1_000_000;
}

/** Contract: pure; the same entries (and children) give the same report. */
export function costOf(entries: readonly Entry[], prices: PriceTable, children: (child: string) => readonly Entry[] | undefined = () => undefined): CostReport {
  const report: CostReport = { steps: [], turns: [], sessions: [], total: { tokens: zero(), usd: 0, unpriced: [] }, asOf: prices.asOf };
  const unpriced = new Set<string>();
  const walk = (log: readonly Entry[], seen: Set<string>) => {
    const start = log[0];
    if (!start || start.kind !== 'session/start' || seen.has(start.id)) return;
    seen.add(start.id);
    const session = { session: start.id, depth: start.depth, tokens: zero(), usd: 0 as number | undefined };
    report.sessions.push(session);
    const turns = new Map<string, CostReport['turns'][number]>();
    let model = start.model;
    for (const e of log) {
      if (e.kind === 'request/header') model = e.params.model;
      else if (e.kind === 'assistant/message') {
        const scripted = isScripted(model);
        const tokens = tokensOf(e.usage);
        const price = scripted ? undefined : priceFor(prices, model);
        const usd = scripted ? 0 : price ? usdOf(tokens, price) : undefined;
        if (!scripted && !price && e.usage) unpriced.add(model);
        report.steps.push({ session: start.id, turn: e.turn, step: e.step, model, tokens, usd: e.usage ? usd : 0, scripted });
        let t = turns.get(e.turn);
        if (!t) turns.set(e.turn, (t = { session: start.id, turn: e.turn, tokens: zero(), usd: 0 }));
        const stepUsd = e.usage ? usd : 0;
        t.tokens = add(t.tokens, tokens);
        t.usd = addUsd(t.usd, stepUsd);
        session.tokens = add(session.tokens, tokens);
        session.usd = addUsd(session.usd, stepUsd);
        report.total.tokens = add(report.total.tokens, tokens);
        report.total.usd = addUsd(report.total.usd, stepUsd);
      } else if (e.kind === 'subagent/start') {
        const child = children(e.child);
        if (child) walk(child, seen);
      }
    }
    report.turns.push(...turns.values());
  };
  walk(entries, new Set());
  report.total.unpriced = [...unpriced].sort();
  return report;
}
