/**
 * The tree budget (`--tree-budget steps=N,tokens=M`): one count of steps and
 * tokens that every child of a delegation tree draws from, however deep.
 * A `step/start` of any child is a step; an `assistant/message` adds its
 * usage's input and output tokens. Once either count reaches its limit the
 * budget is spent: the listeners hear it once (each running delegation then
 * stops its child, naming `TREE_BUDGET_EXHAUSTED`), and the registry admits
 * no new child.
 */
import type { Entry } from '../../log/entries.js';
import type { Disposer, TreeBudget } from '../../ports/subagents.js';

export interface BudgetLimit {
  steps?: number;
  tokens?: number;
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
      else if (entry.kind === 'assistant/message' && entry.usage) used.tokens += entry.usage.inputTokens + entry.usage.outputTokens;
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
