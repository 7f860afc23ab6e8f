/**
 * A session's host, built from composed rows: the registries every session
 * has (tools, hooks, prompt, and the session itself), then each enabled row
 * as the plugin its `use` names (a group's rows in a scope of their own,
 * private when the group isolates), then the caller's extra plugins.
 * Service instances the caller hands in take the place of their seam's row.
 * Building is all or nothing: a row that cannot mount, or one still waiting
 * for a service when everything is mounted, undoes the whole host and is
 * named in the error with the layer it came from.
 */
import { Host, type Plugin } from '../plugins/host.js';
import { PluginMountError } from '../plugins/host-errors.js';
import type { Scope } from '../plugins/scope.js';
import { HookRegistry } from '../plugins/hooks/registry.js';
import { Tools } from '../plugins/tool-registry.js';
import { type ComposedRow } from '../plugins/rows.js';
import { CompositionError } from '../plugins/composition-error.js';
import { HOOKS, PROMPT, SESSION, TOOLS } from '../ports/index.js';
import { keyId, type KeyLike } from '../ports/service.js';
import { REGISTRIES, registryRow } from './builtins.js';
import { AGENT_LOOP, builtinLoop, isAgentLoop, MACHINES, type AgentLoop } from './agent-loop.js';
import type { SessionControl } from '../ports/session.js';
import type { ToolDefinition } from '../ports/tools.js';
import { resolveUse, type LoadedPlugins } from './catalogue.js';
import { PromptRegistry } from './prompt/registry.js';
import { visibleUnder } from './subagents/restrict.js';

/** A service instance that replaces its seam's row. */
export interface ServiceOverride {
  key: KeyLike;
  service: unknown;
}

export interface BuildOptions {
  session: SessionControl;
  overrides?: readonly ServiceOverride[];
  plugins?: readonly Plugin<any>[];
  loaded?: LoadedPlugins;
  /** Tools that take the place of every `tool:*` row. */
  tools?: readonly ToolDefinition[];
  /** A prompt registry that takes the place of the host's own and of every `prompt:*` row. */
  prompt?: PromptRegistry;
  /** A child's tool filter: only these names are seen (`restrict()`), and the scoped tools, registered here, always are. */
  restrict?: { only?: readonly string[] | undefined; scoped: readonly ToolDefinition[] };
}

export interface BuiltHost {
  host: Host;
  tools: Tools;
  hooks: HookRegistry;
  prompt: PromptRegistry;
  /** The loop the session runs: the `loop:agent` row's, else bridle's own (ADR 0077). */
  loop: AgentLoop;
}

const core = (name: string, key: KeyLike, service: unknown): Plugin => ({ name, provides: [key], apply: (ctx) => void ctx.provide(key, service) });

/** A row list that has no row for a registry (one a caller wrote before they were rows) gets the host's, mounted first. */
const REGISTRY_KEYS = [TOOLS, HOOKS, PROMPT] as const;
const providedBy = (rows: readonly ComposedRow[], id: string): boolean => rows.some((r) => r.id === id || (r.rows !== undefined && providedBy(r.rows, id)));

/** Contract: throws `CompositionError` naming the row and its layer (the host is then disposed), else returns a host with every row active. */
export function buildHost(rows: readonly ComposedRow[], o: BuildOptions): BuiltHost {
  const host = new Host('session');
  const scoped = new Set((o.restrict?.scoped ?? []).map((t) => t.name));
  // Tools listed in the order of the rows that registered them, whenever each registered (an MCP server answers late).
  const tools = new Tools(visibleUnder(o.restrict?.only, scoped), (owner) => (owner === 'options' ? -1 : host.rank(owner)));
  const hooks = new HookRegistry((owner) => host.rank(owner));
  const prompt = o.prompt ?? new PromptRegistry((owner) => host.rank(owner));
  const overridden = new Set((o.overrides ?? []).map((s) => keyId(s.key)));
  const fromOf = new Map<string, string>();
  try {
    host.mount(core('registries', REGISTRIES, { tools, hooks, prompt }), undefined, { id: 'core:registries' });
    for (const key of REGISTRY_KEYS) if (!providedBy(rows, keyId(key)) || (key === PROMPT && o.prompt)) host.mount(registryRow(key), undefined, { id: `core:${keyId(key)}` });
    host.mount(core('session', SESSION, o.session), undefined, { id: 'core:session' });
    host.mount(core('machines', MACHINES, builtinLoop), undefined, { id: 'core:machines' });
    for (const s of o.overrides ?? []) host.mount(core(`override ${keyId(s.key)}`, s.key, s.service), undefined, { id: `override:${keyId(s.key)}` });
    const mountRows = (list: readonly ComposedRow[], scope: Scope) => {
      for (const row of list) {
        fromOf.set(row.id, row.from);
        if (row.use === 'group') {
          mountRows(row.rows ?? [], host.scope(row.id, { parent: scope, isolate: row.isolate ?? false }));
          continue;
        }
        if ((o.tools && row.id.startsWith('tool:')) || (o.prompt && (row.id === 'prompt' || row.id.startsWith('prompt:')))) continue;
        const plugin = resolveUse(row, o.loaded);
        if (!plugin) throw new CompositionError(row.id, row.from, `unknown use ${JSON.stringify(row.use)}`);
        if ((plugin.provides ?? []).some((k) => overridden.has(keyId(k)))) continue;
        host.mount(plugin, row.config, { id: row.id, scope });
      }
    };
    mountRows(rows, host.root);
    const built = registriesOf(host, fromOf);
    for (const t of o.tools ?? []) built.tools.register(t, 'options');
    // A child's own tools come last, after its product's: the tool list reads as the parent's, plus them; one named like a product tool shadows it (course ch. 4).
    for (const t of o.restrict?.scoped ?? []) built.tools.registerScoped(t);
    for (const p of o.plugins ?? []) host.mount(p, undefined, { id: p.name });
    const waiting = host.status().find((s) => s.state === 'pending');
    if (waiting) throw new CompositionError(waiting.id, fromOf.get(waiting.id) ?? 'options', `needs service ${waiting.waitingFor.join(', ')}, which no row provides`);
    return { host, ...built, loop: loopOf(host, fromOf) };
  } catch (err) {
    host.dispose();
    if (err instanceof PluginMountError) throw new CompositionError(err.plugin, fromOf.get(err.plugin) ?? 'options', err.cause instanceof Error ? err.cause.message : String(err.cause), { cause: err.cause });
    throw err;
  }
}

/** The row's loop, checked: a module may provide anything under the key. Contract: throws `CompositionError` naming the row. */
function loopOf(host: Host, fromOf: ReadonlyMap<string, string>): AgentLoop {
  if (!host.has(AGENT_LOOP)) return builtinLoop;
  const loop = host.get(AGENT_LOOP);
  if (!isAgentLoop(loop)) throw new CompositionError('loop:agent', fromOf.get('loop:agent') ?? 'options', 'provides an agent-loop service that is not a loop ({ name, provide(seams, recorder) }; build one with machines.refine)');
  return loop;
}

/**
 * The registries the rows put into the session. The session drives them through more than their ports (ranks,
 * scoped tools, the hook pipeline), so a row replacing one provides an instance of bridle's class (a subclass, or
 * the host's own from `registries`, decorated). Contract: throws `CompositionError` naming the row otherwise.
 */
function registriesOf(host: Host, fromOf: ReadonlyMap<string, string>): Omit<BuiltHost, 'host' | 'loop'> {
  const need = (id: string, key: KeyLike, ok: (v: unknown) => boolean) => {
    if (!host.has(key)) throw new CompositionError(id, 'options', `no row provides the ${id} registry (the base bundle's row ${id} does)`);
    const v = host.get(key);
    if (!ok(v)) throw new CompositionError(id, fromOf.get(id) ?? 'options', `provides a ${id} service that is not bridle's ${id} registry`);
    return v;
  };
  return {
    tools: need('tools', TOOLS, (v) => v instanceof Tools) as Tools,
    hooks: need('hooks', HOOKS, (v) => v instanceof HookRegistry) as HookRegistry,
    prompt: need('prompt', PROMPT, (v) => v instanceof PromptRegistry) as PromptRegistry,
  };
}
