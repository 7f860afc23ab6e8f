/**
 * What a row's `use` names: a built-in provider or plugin, looked up first
 * under the row's seam (the id's first or last `:`-segment: `fs` →
 * `fs/memory`, `tool:bash` → `tool/bash`, `explore:model` → `model/…`), then
 * as written (`model/scripted` names it for any id); or a plugin object a
 * module path was loaded into (`loadRowPlugins`). One table, so composition can
 * check a product offline (`config --dump`) without mounting anything.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { policyApproval } from '../adapters/approval/policy.js';
import { fixedClock, systemClock } from '../adapters/clock/system.js';
import { newSessionId, randomIds } from '../adapters/ids/random.js';
import { openaiChatModel, openaiModel } from '../adapters/model/openai.js';
import { openaiResponsesModel } from '../adapters/model/openai-responses.js';
import { anthropicModel } from '../adapters/model/anthropic.js';
import { scriptedModel } from '../adapters/model/scripted.js';
import { jsonlStore } from '../adapters/store/jsonl.js';
import { postgresStore } from '../adapters/store/postgres.js';
import { memoryStore } from '../adapters/store/memory.js';
import { bwrapSandbox } from '../adapters/sandbox/bwrap.js';
import { offSandbox } from '../adapters/sandbox/off.js';
import { acpClientFsProvider } from '../adapters/fs/acp-client.js';
import { localFsProvider } from '../adapters/fs/local.js';
import { memoryFsProvider } from '../adapters/fs/memory.js';
import { acpClientSubprocessProvider } from '../adapters/subprocess/acp-client.js';
import { localSubprocessProvider } from '../adapters/subprocess/local.js';
import { memorySubprocessProvider } from '../adapters/subprocess/memory.js';
import { mcpPlugin } from '../adapters/mcp/mcp.js';
import type { ProviderDefinition } from '../ports/provider.js';
import { readOnlyModePlugin } from '../plugins/guards/read-only-mode.js';
import { repeatCallPlugin } from '../plugins/guards/repeat-call.js';
import { overflowPlugin, retryPlugin } from '../plugins/recovery.js';
import type { Plugin } from '../plugins/host.js';
import { providerPlugin } from '../plugins/provider-plugin.js';
import type { Row } from '../plugins/rows.js';
import { builtinTools, optionalTools } from '../tools/index.js';
import { hooksRegistryPlugin, promptRegistryPlugin, toolsRegistryPlugin, contextPlugin, coreSectionPlugin, limitsPlugin, pricesPlugin, toolPlugin, timeSectionPlugin, toolsSectionPlugin, workspaceSectionPlugin, nestedAgentsPlugin } from './builtins.js';
import { forkSubagents } from '../adapters/subagents/fork.js';
import { mockRemoteSubagents } from '../adapters/subagents/mock-remote.js';
import { processSubagents } from '../adapters/subagents/process.js';
import { spawnSubagents } from '../adapters/subagents/spawn.js';
import { SUBAGENTS } from '../ports/index.js';
import type { SubagentProvider } from '../ports/subagents.js';
import { delegatePlugin } from './subagents/delegate.js';
import { skillsPlugin } from './skills/plugin.js';
import { workflowPlugin } from './workflow/tool.js';
import { workerWorkflow } from '../adapters/workflow/worker.js';
import { registryPlugin } from './subagents/registry.js';
import { agentLoopPlugin } from './agent-loop.js';
import { flushLiveTraces, liveTraces, type LiveTracesOptions } from '../adapters/tracing/live.js';

/**
 * A subagent provider as a row (`subagent:<name>`): several are mounted at
 * once, so each registers into the `subagents` registry, by the row's name
 * (`subagent:explore` with `use: spawn` is provider `explore`), instead of
 * providing a service of its own.
 */
function subagentPlugin<C>(def: ProviderDefinition<SubagentProvider, C>): Plugin<C> {
  return {
    name: `${def.seam.id}/${def.name}`,
    inject: [SUBAGENTS, ...(def.inject ?? [])],
    config: def.config,
    apply(ctx, config) {
      const cleanups: (() => void)[] = [];
      const provider = def.create(config, { get: ctx.get, has: ctx.has, onDispose: (f) => void cleanups.push(f) });
      ctx.effect(() => () => {
        for (const f of cleanups.reverse()) f();
      });
      const name = /^subagent:[a-z][a-z0-9-]*$/.test(ctx.id) ? ctx.id.slice('subagent:'.length) : provider.name;
      const named: SubagentProvider = name === provider.name ? provider : { name, get advertised() { return provider.advertised; }, open: (req) => provider.open(req) };
      ctx.effect(() => ctx.get(SUBAGENTS).register(named, ctx.id));
    },
  };
}
const subagentProviders: ProviderDefinition<SubagentProvider, any>[] = [spawnSubagents, forkSubagents, mockRemoteSubagents, processSubagents];

const providers: ProviderDefinition<any, any>[] = [openaiChatModel, openaiModel, openaiResponsesModel, anthropicModel, scriptedModel, jsonlStore, memoryStore, postgresStore, policyApproval, systemClock, fixedClock, randomIds, bwrapSandbox, offSandbox, localFsProvider, memoryFsProvider, acpClientFsProvider, localSubprocessProvider, memorySubprocessProvider, acpClientSubprocessProvider, workerWorkflow];

/** Built-ins by qualified name (`<seam>/<use>`), or bare where they belong to no seam. */
export const CATALOGUE: ReadonlyMap<string, Plugin<any>> = new Map<string, Plugin<any>>([
  ...providers.map((p) => [`${p.seam.id}/${p.name}`, providerPlugin(p)] as const),
  ...[...builtinTools(), ...optionalTools()].map((t) => [`tool/${t.name}`, toolPlugin(t)] as const),
  ...subagentProviders.map((p) => [`${p.seam.id}/${p.name}`, subagentPlugin(p)] as const),
  ['tools/registry', toolsRegistryPlugin],
  ['hooks/registry', hooksRegistryPlugin],
  ['prompt/registry', promptRegistryPlugin],
  ['subagents/registry', registryPlugin],
  ['tool/delegate', delegatePlugin],
  ['tool/workflow', workflowPlugin],
  ['turn/limits', limitsPlugin],
  ['loop/machines', agentLoopPlugin],
  ['prices/table', pricesPlugin],
  ['compaction/compaction', contextPlugin],
  ['prompt/core', coreSectionPlugin],
  ['prompt/tools', toolsSectionPlugin],
  ['prompt/workspace', workspaceSectionPlugin],
  ['prompt/nested', nestedAgentsPlugin],
  ['prompt/skills', skillsPlugin],
  ['prompt/time', timeSectionPlugin],
  ['recovery/retry', retryPlugin],
  ['recovery/overflow', overflowPlugin],
  ['guard/repeat-call', repeatCallPlugin],
  ['guard/read-only-mode', readOnlyModePlugin],
  // `mcp:<name>` rows: the id's first segment is the seam the lookup tries.
  ['mcp/mcp', mcpPlugin],
]);

/**
 * The plugins a host mounts in every session it opens besides its rows: the live traces, when the standard
 * OpenTelemetry variables name a collector (ADR 0055); none otherwise, and then nothing of OpenTelemetry loads.
 */
export function hostPlugins(o: LiveTracesOptions): Plugin[] {
  const live = liveTraces(o);
  return live ? [live.plugin] : [];
}

/** Hands what the host plugins still hold (spans on their way to a collector) over before the process exits. */
export async function flushHostPlugins(): Promise<void> {
  await flushLiveTraces();
}

/** A `use` that names a module: `./x.js`, `../x.js`, `/abs/x.js`, `file:///…`. */
export const isModulePath = (use: string) => use.startsWith('./') || use.startsWith('../') || use.startsWith('/') || use.startsWith('file:');

/** The seams a row id may name: its first `:`-segment (`tool:bash` → `tool`), and its last (`explore:model` → `model`). */
export const seamsOf = (rowId: string): string[] => [...new Set([rowId.split(':')[0]!, rowId.split(':').at(-1)!])];

/** Plugins loaded from module paths, by the `use` that named them. */
export type LoadedPlugins = ReadonlyMap<string, Plugin<any>>;

/** Contract: the plugin a row mounts, or undefined for a `use` that names nothing known (and no loaded module). */
export function resolveUse(row: Pick<Row, 'id' | 'use'>, loaded: LoadedPlugins = new Map()): Plugin<any> | undefined {
  if (isModulePath(row.use)) return loaded.get(row.use);
  for (const seam of seamsOf(row.id)) {
    const p = CATALOGUE.get(`${seam}/${row.use}`);
    if (p) return p;
  }
  // A use qualified with its seam (`model/scripted`) names it whatever the row's id.
  return CATALOGUE.get(row.use);
}

/** The names a row of this seam may `use`, for an error that says what would work. */
export function knownUses(rowId: string): string[] {
  const seams = seamsOf(rowId);
  return [...CATALOGUE.keys()].filter((k) => seams.some((s) => k.startsWith(`${s}/`))).map((k) => k.slice(k.indexOf('/') + 1));
}

/** The `use` of a whole model row a row's `config.model` names for its children (ADR 0066), if it names one. */
export function childModelUse(config: unknown): string | undefined {
  const model = (config as { model?: unknown } | null | undefined)?.model;
  const use = typeof model === 'object' && model !== null ? (model as { use?: unknown }).use : undefined;
  return typeof use === 'string' ? use : undefined;
}

/** Rows (and their groups' rows) whose `use`, or whose children's model row's `use` (ADR 0077), is a module path. */
function* moduleUses(rows: readonly Row[]): Generator<string> {
  for (const r of rows) {
    if (isModulePath(r.use)) yield r.use;
    const model = childModelUse(r.config);
    if (model !== undefined && isModulePath(model)) yield model;
    if (r.rows) yield* moduleUses(r.rows);
  }
}

export class PluginModuleError extends Error {
  override name = 'PluginModuleError';
}

const isPlugin = (v: unknown): v is Plugin<any> => {
  const p = v as Plugin | null | undefined;
  return typeof p === 'object' && p !== null && typeof p.name === 'string' && typeof p.apply === 'function';
};

/**
 * Imports every module a row's `use` names (absolute paths or `file:` URLs;
 * `loadConfigLayers` resolves relative ones against the file that wrote
 * them). Contract: rejects with `PluginModuleError` naming the module when
 * it cannot be imported or its default export is not a plugin
 * (`{ name, apply(ctx, config) }`).
 */
export async function loadRowPlugins(rows: readonly Row[]): Promise<LoadedPlugins> {
  const out = new Map<string, Plugin<any>>();
  const sums = new Map<string, string>();
  digests.set(out, sums);
  for (const use of new Set(moduleUses(rows))) {
    let mod: { default?: unknown };
    try {
      // The bytes it is imported from, read first: what a replay of the log compares (ADR 0085).
      sums.set(use, createHash('sha256').update(readFileSync(use.startsWith('file:') ? fileURLToPath(use) : use)).digest('hex'));
      mod = (await import(use.startsWith('file:') ? use : pathToFileURL(use).href)) as { default?: unknown };
    } catch (err) {
      throw new PluginModuleError(`cannot load plugin module ${use}: ${(err as Error).message}`);
    }
    if (!isPlugin(mod.default)) throw new PluginModuleError(`plugin module ${use}: its default export is not a plugin ({ name, apply(ctx, config) })`);
    out.set(use, mod.default);
  }
  return out;
}

/** For each `loadRowPlugins` result, the SHA-256 of every module file it imported, by `use`. */
const digests = new WeakMap<LoadedPlugins, ReadonlyMap<string, string>>();

/** Contract: pure; the SHA-256 (hex) of the file `use` was loaded from by `loadRowPlugins`, else undefined (a module handed in already imported). */
export const moduleDigest = (loaded: LoadedPlugins | undefined, use: string): string | undefined => (loaded ? digests.get(loaded)?.get(use) : undefined);

/** A fresh session id as the base `ids` row makes them, for a host that names a session outside one (a fork's, an eval's). */
export const freshSessionId = (): string => newSessionId();
