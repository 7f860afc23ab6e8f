/**
 * The `subagents` row: the registry of subagent providers (each
 * `subagent:<name>` row registers one), the depth limit (`--max-depth`), and
 * the tree's budget (`--tree-budget`). It decides, before any child exists,
 * whether a delegation may happen at all.
 */
import { z } from 'zod';
import { SESSION, SUBAGENTS } from '../../ports/index.js';
import { AdmissionCode, type Admission, type DelegationRequest, type Disposer, type SubagentProvider, type Subagents, type TreeBudget } from '../../ports/subagents.js';
import type { Plugin } from '../../plugins/host.js';
import { createTreeBudget, type BudgetLimit } from './budget.js';

export class DuplicateSubagentProviderError extends Error {
  override name = 'DuplicateSubagentProviderError';
}

export interface RegistryOptions {
  maxDepth: number;
  budget?: TreeBudget;
}

/** Contract: pure but for its providers and teardowns; see `Subagents`. */
export function createRegistry(o: RegistryOptions): Subagents {
  const providers = new Map<string, { provider: SubagentProvider; owner: string }>();
  const teardowns = new Set<Promise<unknown>>();
  return {
    maxDepth: o.maxDepth,
    ...(o.budget ? { budget: o.budget } : {}),
    register(provider, owner): Disposer {
      const taken = providers.get(provider.name);
      if (taken) throw new DuplicateSubagentProviderError(`subagent provider ${provider.name} is registered twice: by ${taken.owner} and by ${owner}`);
      const entry = { provider, owner };
      providers.set(provider.name, entry);
      return () => {
        if (providers.get(provider.name) === entry) providers.delete(provider.name);
      };
    },
    names: () => [...providers.keys()],
    admit(req: DelegationRequest, offered: readonly string[]): Admission {
      const found = providers.get(req.provider)?.provider;
      if (!found) return { ok: false, code: AdmissionCode.SUBAGENT_PROVIDER_UNKNOWN, message: `there is no subagent provider named ${JSON.stringify(req.provider)} (this session has: ${[...providers.keys()].join(', ') || 'none'})` };
      if (req.depth > o.maxDepth) return { ok: false, code: AdmissionCode.DEPTH_LIMIT, message: `delegation depth ${req.depth} is over the limit of ${o.maxDepth} (--max-depth); do this task yourself` };
      const own = found.advertised.maxDepth;
      if (own !== undefined && req.depth > own) return { ok: false, code: AdmissionCode.DEPTH_LIMIT, message: `delegation depth ${req.depth} is deeper than provider ${found.name} can go (${own}); do this task yourself` };
      if (req.tools && found.advertised.filters === false) return { ok: false, code: AdmissionCode.TOOL_FILTER_UNSUPPORTED, message: `provider ${found.name} cannot narrow a child's tools (leave tools out, or use another provider)` };
      if (req.tools) {
        const can = new Set(found.advertised.tools ?? offered);
        const missing = req.tools.filter((t) => !can.has(t));
        if (missing.length) return { ok: false, code: AdmissionCode.TOOL_FILTER_UNSUPPORTED, message: `provider ${found.name} cannot offer ${missing.join(', ')} (it offers: ${[...can].join(', ') || 'nothing'})` };
      }
      const spent = o.budget?.exhausted();
      if (spent) return { ok: false, code: AdmissionCode.TREE_BUDGET_EXHAUSTED, message: `the delegation tree's budget is spent (${spent})` };
      return { ok: true, provider: found };
    },
    track(teardown) {
      const settled = teardown.then(
        () => undefined,
        () => undefined,
      );
      teardowns.add(settled);
      void settled.then(() => teardowns.delete(settled));
    },
    async drain() {
      while (teardowns.size > 0) await Promise.all([...teardowns]);
    },
  };
}

export const TreeBudgetConfig = z.strictObject({ steps: z.int().positive().optional(), tokens: z.int().positive().optional() });

export const RegistryConfig = z.strictObject({
  /** The deepest child depth allowed (the root session is 0); 0: no delegation at all. */
  maxDepth: z.int().min(0).max(8).default(0),
  /** Steps and tokens the whole tree of children may use; absent: no budget. */
  treeBudget: TreeBudgetConfig.optional(),
});
export type RegistryConfig = z.infer<typeof RegistryConfig>;

/** The `subagents` row. A child inherits its parent's budget (the one count for the whole tree), not a new one. */
export const registryPlugin: Plugin<RegistryConfig> = {
  name: 'subagents',
  inject: [SESSION],
  provides: [SUBAGENTS],
  config: RegistryConfig,
  apply(ctx, c) {
    const session = ctx.get(SESSION);
    const budget = session.budget ?? (c.treeBudget && (c.treeBudget.steps !== undefined || c.treeBudget.tokens !== undefined) ? createTreeBudget(c.treeBudget as BudgetLimit) : undefined);
    ctx.provide(SUBAGENTS, createRegistry({ maxDepth: c.maxDepth, ...(budget ? { budget } : {}) }));
  },
};
