/**
 * The built-in plugins that are not providers of a seam: the turn's limits,
 * the context's settings, the prompt's sections, and a tool as a row. Each
 * is what one row of the base bundle mounts.
 */
import { z } from 'zod';
import { CONTEXT, HOOKS, LOOP, PRICES, PROMPT, SESSION, TOOLS } from '../ports/index.js';
import { LIST_PRICES } from '../bundles/prices.js';
import { BudgetConfig, Price } from '../log/entries-budget.js';
import { DEFAULT_MAX_STEPS } from '../ports/loop.js';
import type { ToolDefinition } from '../ports/tools.js';
import type { Plugin } from '../plugins/host.js';
import { toolSpec } from '../tools/index.js';
import { DEFAULT_COMPACT_THRESHOLD } from './context/windows.js';
import { nearestNestedAgentsFile, readAgentsFiles } from './prompt/agents-files.js';
import { nestedBlock, shownNested, touchedDir } from './prompt/nested-agents.js';
import { coreSection, DEFAULT_CORE, toolsSection, workspaceSection } from './prompt/builtin.js';
import { timeSection, type TimeSectionConfig } from './prompt/time.js';
import type { HookRegistry } from '../plugins/hooks/registry.js';
import type { Tools } from '../plugins/tool-registry.js';
import { keyId, serviceKey, type KeyLike } from '../ports/service.js';
import type { PromptRegistry } from './prompt/registry.js';

const tokens = z.int().min(1024);

/** The `prices` row's config: a table that replaces the shipped one whole (its date says how old its prices are). */
export const PricesConfig = z.strictObject({
  asOf: z.string().min(1).default(LIST_PRICES.asOf),
  models: z.record(z.string().min(1), Price).default(LIST_PRICES.models),
});

/** The `prices` row: US dollars per million tokens, per model, that `bridle cost` and the replay prices usage at. */
export const pricesPlugin: Plugin<z.infer<typeof PricesConfig>> = {
  name: 'table',
  provides: [PRICES],
  config: PricesConfig,
  apply: (ctx, c) => void ctx.provide(PRICES, c),
};

/** The `turn` row: a turn's step budget, and the session's spending cap with the prices it is counted at (ADR 0047; default: the `prices` row's). */
export const limitsPlugin: Plugin<{ maxSteps: number; budget?: z.infer<typeof BudgetConfig> }> = {
  name: 'limits',
  provides: [LOOP],
  config: z.strictObject({ maxSteps: z.int().positive().default(DEFAULT_MAX_STEPS), budget: BudgetConfig.optional() }),
  apply: (ctx, c) => void ctx.provide(LOOP, c),
};

export const ContextConfig = z.strictObject({
  /** The model's window in tokens; else `windows[model]`, else the built-in table. */
  window: tokens.optional(),
  windows: z.record(z.string().min(1), tokens).default({}),
  /** Compaction is due when the next request reaches this share of the window. */
  threshold: z.number().positive().max(1).default(DEFAULT_COMPACT_THRESHOLD),
  tailRatio: z.number().positive().max(1).optional(),
  summaryMaxTokens: z.int().positive().optional(),
});

/** The `compaction` row: the context window and when and how compaction runs. */
export const contextPlugin: Plugin<z.infer<typeof ContextConfig>> = {
  name: 'compaction',
  provides: [CONTEXT],
  config: ContextConfig,
  apply: (ctx, c) => void ctx.provide(CONTEXT, c),
};

const empty = z.strictObject({});

/** The `prompt:core` row: who the agent is. `text` replaces the built-in wording. */
export const coreSectionPlugin: Plugin<{ text: string }> = {
  name: 'prompt-core',
  inject: [PROMPT],
  config: z.strictObject({ text: z.string().min(1).default(DEFAULT_CORE) }),
  apply: (ctx, c) => void ctx.prompt.section(coreSection(c.text)),
};

/** The `prompt:tools` row: the tools the session offers, one line each. */
export const toolsSectionPlugin: Plugin = {
  name: 'prompt-tools',
  inject: [PROMPT, TOOLS],
  config: empty,
  apply: (ctx) => void ctx.prompt.section(toolsSection(() => ctx.get(TOOLS).list().map(toolSpec))),
};

/** The `prompt:workspace` row: the workspace and its AGENTS.md instructions, read afresh per turn. */
export const workspaceSectionPlugin: Plugin = {
  name: 'prompt-workspace',
  inject: [PROMPT, SESSION],
  config: empty,
  apply(ctx) {
    const s = ctx.get(SESSION);
    ctx.prompt.section(workspaceSection(() => readAgentsFiles(s.cwd, undefined, s.bridleHome)));
  },
};

/**
 * The `prompt:nested` row: the AGENTS.md (or override) nearest to a directory
 * a file tool touched below the workspace, appended once per session to that
 * call's logged result (ADR 0060). Claimed in memory as well as read from the
 * log, so two calls in flight at once do not both add it.
 */
export const nestedAgentsPlugin: Plugin = {
  name: 'prompt-nested',
  inject: [HOOKS, SESSION],
  config: empty,
  apply(ctx) {
    const s = ctx.get(SESSION);
    const claimed = new Map<string, number>();
    ctx.hooks.on('tool/execute', async (p, next) => {
      const out = await next();
      const dir = out.status === 'ok' ? touchedDir(p.call.name, p.args, s.cwd) : undefined;
      const file = dir === undefined ? undefined : nearestNestedAgentsFile(s.cwd, dir, s.bridleHome);
      if (!file) return out;
      const shown = new Map([...shownNested(s.entries()), ...claimed]);
      if (shown.has(file.path)) return out;
      const block = nestedBlock(file, [...shown.values()].reduce((a, b) => a + b, 0));
      claimed.set(file.path, [...block].length);
      return { ...out, content: out.content + block };
    });
  },
};

/** The `prompt:time` row (off unless a patch adds it): the date and time as the turn began, from the log. */
export const timeSectionPlugin: Plugin<TimeSectionConfig> = {
  name: 'prompt-time',
  inject: [PROMPT],
  config: z.strictObject({ refreshMinutes: z.int().positive().default(1) }),
  apply: (ctx, c) => void ctx.prompt.section(timeSection(c)),
};

/** A tool as a row (`tool:<name>`): registers it with the `tools` service. */
export function toolPlugin(tool: ToolDefinition): Plugin {
  return { name: `tool/${tool.name}`, inject: [TOOLS], config: empty, apply: (ctx) => void ctx.tools.register(tool) };
}

/** The registries this host built, for the `tools`, `hooks` and `prompt` rows to put into the session (ADR 0066). */
export interface HostRegistries {
  tools: Tools;
  hooks: HookRegistry;
  prompt: PromptRegistry;
}
export const REGISTRIES = serviceKey<HostRegistries>('registries');

/** The row that puts one of the host's registries into the session; a patch replaces it by id like any other. */
export const registryRow = (key: typeof TOOLS | typeof HOOKS | typeof PROMPT): Plugin => ({
  name: `${keyId(key)}-registry`,
  inject: [REGISTRIES],
  provides: [key],
  config: z.strictObject({}),
  apply: (ctx) => void ctx.provide(key as KeyLike<unknown>, ctx.get(REGISTRIES)[keyId(key) as keyof HostRegistries]),
});


export const toolsRegistryPlugin = registryRow(TOOLS);
export const hooksRegistryPlugin = registryRow(HOOKS);
export const promptRegistryPlugin = registryRow(PROMPT);
