/**
 * The one accounting of what a session and its delegation tree spend (ADR 0047), for both caps built on it.
 *
 * The tree budget (`--tree-budget steps=N,tokens=M`): one count of steps and tokens that every child of a
 * delegation tree draws from, however deep. A `step/start` of any child is a step; an `assistant/message` adds
 * its usage's tokens. Once either count reaches its limit the budget is spent: the listeners hear it once (each
 * running delegation then stops its child, naming `TREE_BUDGET_EXHAUSTED`), and the registry admits no new child.
 *
 * The session budget (`--budget tokens=N,usd=X`): a cap on a session and its whole tree, checked before each model
 * call. It is a fold of the session's own log alone — the cap and prices `session/start` recorded, each
 * `assistant/message`'s usage priced at the model the last `request/header` named, each `subagent/end`'s figure
 * for a child's tree, each raise a `budget/decided` logged — so replay reaches the same verdict at the same call.
 */
import { isScripted, priceFor, tokensOf, usdOf } from '../../log/cost.js';
import type { PriceTable } from '../../log/entries-budget.js';
import type { BudgetConfig, Spend, BudgetLimit as SpendLimit } from '../../log/entries-budget.js';
import type { Entry } from '../../log/entries.js';
import type { Usage } from '../../log/entry-values.js';
import type { Disposer, TreeBudget } from '../../ports/subagents.js';

export interface BudgetLimit {
  steps?: number;
  tokens?: number;
}

/** The tokens a call counts for: every input token (the cache's included) and every output token (reasoning included), as reported. */
export const callTokens = (u: Usage): number => u.inputTokens + u.outputTokens;

/** Contract: pure; a call's dollars at the table's price, 0 for a scripted model and for a model the table does not price. */
export function callUsd(u: Usage, model: string, prices: PriceTable | undefined): number {
  if (isScripted(model) || !prices) return 0;
  const p = priceFor(prices, model);
  return p ? usdOf(tokensOf(u), p) : 0;
}

const usd = (n: number) => `$${n.toFixed(4)}`;

/** Contract: pure; why the cap is spent (`tokens 1200/1000 used`), or undefined while every part has some left. */
export function spentWhy(limit: SpendLimit, used: Spend): string | undefined {
  const parts: string[] = [];
  if (limit.tokens !== undefined && used.tokens >= limit.tokens) parts.push(`tokens ${used.tokens}/${limit.tokens} used`);
  if (limit.usd !== undefined && used.usd >= limit.usd) parts.push(`usd ${usd(used.usd)}/${usd(limit.usd)} used`);
  return parts.length ? parts.join(', ') : undefined;
}

/** Contract: pure; one more budget's worth from where the spending stands: each part of `base` added to what is used. */
export function raisedLimit(base: SpendLimit, used: Spend): SpendLimit {
  return { ...(base.tokens !== undefined ? { tokens: used.tokens + base.tokens } : {}), ...(base.usd !== undefined ? { usd: used.usd + base.usd } : {}) };
}

/** Contract: pure; what is left of the cap for a child to spend (never below 0). */
export function remainingOf(limit: SpendLimit, used: Spend): SpendLimit {
  return { ...(limit.tokens !== undefined ? { tokens: Math.max(0, limit.tokens - used.tokens) } : {}), ...(limit.usd !== undefined ? { usd: Math.max(0, limit.usd - used.usd) } : {}) };
}

export interface SessionBudget {
  /** The cap `session/start` recorded, undefined when the session has none. */
  readonly config: BudgetConfig | undefined;
  /** The cap in force: the recorded one, or the last raise. */
  readonly limit: SpendLimit | undefined;
  readonly used: Spend;
  /** Folds one more entry of the session's log in. */
  add(entry: Entry): void;
  /** Why the next model call may not be made, or undefined. */
  spent(): string | undefined;
}

/** Contract: pure; the session budget as `entries` (a session's own log, from its `session/start`) leave it; `add` goes on. */
export function sessionBudget(entries: readonly Entry[] = []): SessionBudget {
  let config: BudgetConfig | undefined;
  let limit: SpendLimit | undefined;
  let model = '';
  const used: Spend = { tokens: 0, usd: 0 };
  const add = (e: Entry) => {
    if (e.kind === 'session/start') {
      config = e.config?.budget;
      limit = config ? { ...(config.tokens !== undefined ? { tokens: config.tokens } : {}), ...(config.usd !== undefined ? { usd: config.usd } : {}) } : undefined;
      model = e.model;
    } else if (e.kind === 'request/header') model = e.params.model;
    else if (e.kind === 'assistant/message' && e.usage) {
      used.tokens += callTokens(e.usage);
      used.usd += callUsd(e.usage, model, config?.prices);
    } else if (e.kind === 'subagent/end' && e.usage) {
      used.tokens += e.usage.tokens;
      used.usd += e.usage.usd;
    } else if (e.kind === 'budget/decided' && e.limit) limit = e.limit;
  };
  for (const e of entries) add(e);
  return {
    get config() {
      return config;
    },
    get limit() {
      return limit;
    },
    used,
    add,
    spent: () => (limit ? spentWhy(limit, used) : undefined),
  };
}

/** Contract: pure; what a child's log says its tree spent (its own calls and its children's figures), at its logged prices. */
export function spendOfLog(entries: readonly Entry[]): Spend {
  const b = sessionBudget(entries);
  return { tokens: b.used.tokens, usd: b.used.usd };
}

export function createTreeBudget(limit: BudgetLimit): TreeBudget {
  const used = { steps: 0, tokens: 0 };
  const listeners = new Set<(why: string) => void>();
  let spent: string | undefined;
  const check = (): string | undefined => {
    if (limit.steps !== undefined && used.steps >= limit.steps) return `steps ${used.steps}/${limit.steps} used`;
    if (limit.tokens !== undefined && used.tokens >= limit.tokens) return `tokens ${used.tokens}/${limit.tokens} used`;
    return undefined;
  };
  return {
    limit,
    used,
    draw(entry: Entry) {
      if (entry.kind === 'step/start') used.steps++;
      else if (entry.kind === 'assistant/message' && entry.usage) used.tokens += callTokens(entry.usage);
      else return spent;
      if (spent === undefined) {
        spent = check();
        if (spent !== undefined) for (const f of [...listeners]) f(spent);
      }
      return spent;
    },
    exhausted: () => spent ?? check(),
    onExhausted(listener): Disposer {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}

/** `steps=50,tokens=200000`, either part optional. Contract: throws an `Error` worded for the flag on anything else. */
export function parseTreeBudget(text: string): BudgetLimit {
  const out: BudgetLimit = {};
  for (const part of text.split(',').map((p) => p.trim())) {
    const m = /^(steps|tokens)=(\d+)$/.exec(part);
    if (!m || Number(m[2]) < 1) throw new Error(`--tree-budget wants steps=N,tokens=M (either part may be left out, each at least 1), got ${JSON.stringify(text)}`);
    out[m[1] as 'steps' | 'tokens'] = Number(m[2]);
  }
  return out;
}

/** `tokens=200000,usd=1.50`, either part optional. Contract: throws an `Error` worded for the flag on anything else. */
export function parseBudget(text: string): SpendLimit {
  const out: SpendLimit = {};
  for (const part of text.split(',').map((p) => p.trim())) {
    const m = /^(?:(tokens)=(\d+)|(usd)=(\d+(?:\.\d+)?|\.\d+))$/.exec(part);
    const value = m ? Number(m[2] ?? m[4]) : 0;
    if (!m || !(value > 0)) throw new Error(`--budget wants tokens=N,usd=X (either part may be left out, each above 0), got ${JSON.stringify(text)}`);
    if (m[1]) out.tokens = value;
    else out.usd = value;
  }
  return out;
}
