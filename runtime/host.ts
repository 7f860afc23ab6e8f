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
import { Host, PluginMountError, type Plugin, type Scope } from '../plugins/host.js';
import { HookRegistry } from '../plugins/hooks/registry.js';
import { Tools } from '../plugins/tool-registry.js';
import { CompositionError, type ComposedRow } from '../plugins/rows.js';
import { HOOKS, PROMPT, SESSION, TOOLS } from '../ports/index.js';
import { keyId, type KeyLike } from '../ports/service.js';
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
}

const core = (name: string, key: KeyLike, service: unknown): Plugin => ({ name, provides: [key], apply: (ctx) => void ctx.provide(key, service) });

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
    host.mount(core('tools', TOOLS, tools), undefined, { id: 'core:tools' });
    host.mount(core('hooks', HOOKS, hooks), undefined, { id: 'core:hooks' });
    host.mount(core('prompt', PROMPT, prompt), undefined, { id: 'core:prompt' });
    host.mount(core('session', SESSION, o.session), undefined, { id: 'core:session' });
    for (const s of o.overrides ?? []) host.mount(core(`override ${keyId(s.key)}`, s.key, s.service), undefined, { id: `override:${keyId(s.key)}` });
    for (const t of o.tools ?? []) tools.register(t, 'options');
    const mountRows = (list: readonly ComposedRow[], scope: Scope) => {
      for (const row of list) {
        fromOf.set(row.id, row.from);
        if (row.use === 'group') {
          mountRows(row.rows ?? [], host.scope(row.id, { parent: scope, isolate: row.isolate ?? false }));
          continue;
        }
        if ((o.tools && row.id.startsWith('tool:')) || (o.prompt && row.id.startsWith('prompt:'))) continue;
        const plugin = resolveUse(row, o.loaded);
        if (!plugin) throw new CompositionError(row.id, row.from, `unknown use ${JSON.stringify(row.use)}`);
        if ((plugin.provides ?? []).some((k) => overridden.has(keyId(k)))) continue;
        host.mount(plugin, row.config, { id: row.id, scope });
      }
    };
    mountRows(rows, host.root);
    // A child's own tools come last, after its product's: the tool list reads as the parent's, plus them; one named like a product tool shadows it (course ch. 4).
    for (const t of o.restrict?.scoped ?? []) tools.registerScoped(t);
    for (const p of o.plugins ?? []) host.mount(p, undefined, { id: p.name });
    const waiting = host.status().find((s) => s.state === 'pending');
    if (waiting) throw new CompositionError(waiting.id, fromOf.get(waiting.id) ?? 'options', `needs service ${waiting.waitingFor.join(', ')}, which no row provides`);
  } catch (err) {
    host.dispose();
    if (err instanceof PluginMountError) throw new CompositionError(err.plugin, fromOf.get(err.plugin) ?? 'options', err.cause instanceof Error ? err.cause.message : String(err.cause), { cause: err.cause });
    throw err;
  }
  return { host, tools, hooks, prompt };
}
