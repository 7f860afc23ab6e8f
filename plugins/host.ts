/**
 * The plugin substrate: a host holds services by stable key; a plugin names
 * the services it needs (`inject`) and waits, pending, until every one of
 * them exists; every registration it makes is an effect whose disposer the
 * host keeps, so unmounting a plugin undoes exactly what it did, in reverse
 * order, and nothing of its siblings. One provider per service per scope: a
 * second one throws at mount, naming both. A scope made with `isolate`
 * keeps the services provided inside it to itself.
 */
import type { z } from 'zod';
import type { Guard, HookName, ListenerOf } from '../ports/hooks.js';
import { HOOKS, PROMPT, TOOLS } from '../ports/index.js';
import type { PromptSection } from '../ports/prompt.js';
import { keyId, type KeyLike } from '../ports/service.js';
import type { ToolDefinition } from '../ports/tools.js';
import { DuplicateProviderError, MissingServiceError, PluginMountError } from './host-errors.js';
import { inside, Scope, type Provided } from './scope.js';

export type Disposer = () => void;

/** What a plugin can do while it is mounted. Each registration returns its disposer and is undone at unmount. */
export interface PluginContext {
  /** The row id (or plugin name) this plugin was mounted as; named in errors and reports. */
  readonly id: string;
  /** Contract: returns the service visible from this plugin's scope; throws `MissingServiceError` if none is. */
  get<T>(key: KeyLike<T>): T;
  has(key: KeyLike): boolean;
  /** Runs `fn` now and keeps the disposer it returns; the returned disposer runs it early, once. */
  effect(fn: () => Disposer | void): Disposer;
  /** Provides a service in this plugin's scope (an effect). Contract: throws `DuplicateProviderError` if another plugin provides it there. */
  provide<T>(key: KeyLike<T>, service: T): Disposer;
  /** Registers a tool with the `tools` service (an effect). */
  readonly tools: { register(tool: ToolDefinition): Disposer };
  /** Registers a hook listener or a guard with the `hooks` service (an effect). */
  readonly hooks: { on<K extends HookName>(hook: K, listener: ListenerOf<K>): Disposer; guard(guard: Guard): Disposer };
  /** Adds a section to the system prompt (an effect). */
  readonly prompt: { section(section: PromptSection): Disposer };
}

/** A plugin: a module's default export, or a built-in. `config`, when given, validates the row's config before `apply` sees it. */
export interface Plugin<C = unknown> {
  readonly name: string;
  /** Services that must exist before `apply` runs; until then the plugin is pending. */
  readonly inject?: readonly KeyLike[];
  /** The services `apply` provides, declared so composition can check one provider per seam before anything runs. */
  readonly provides?: readonly KeyLike[];
  readonly config?: z.ZodType<C>;
  /** May be async (a server to start); the host's `ready()` waits for it. */
  apply(ctx: PluginContext, config: C): void | Promise<void>;
}

export type PluginState = 'pending' | 'active' | 'failed';

interface Mounted {
  id: string;
  plugin: Plugin<any>;
  config: unknown;
  scope: Scope;
  state: PluginState;
  effects: Disposer[];
  /** Bumped at every activation and deactivation: an async `apply` of an older one may register nothing more. */
  generation: number;
  error?: unknown;
  running?: Promise<void>;
  /** Where it stands in mount order (a reload keeps it: the registries order their entries by it). */
  order: number;
}

export interface MountOptions {
  /** The row id; default the plugin's name. Unique in the host. */
  id?: string;
  scope?: Scope;
}

/** A read-out of one mounted plugin, for dumps and tests. */
export interface PluginStatus {
  id: string;
  name: string;
  state: PluginState;
  /** For a pending plugin: the services it still waits for. */
  waitingFor: string[];
  error?: string;
}

export class Host {
  readonly root: Scope;
  private readonly mounted = new Map<string, Mounted>();
  private readonly queue: Mounted[] = [];
  private draining = false;
  private mounts = 0;

  constructor(name = 'host') {
    this.root = new Scope(name);
  }

  /** A group's scope; with `isolate`, the services provided by plugins mounted in it stay in it. */
  scope(name: string, o: { parent?: Scope; isolate?: boolean | readonly string[] } = {}): Scope {
    return new Scope(name, o.parent ?? this.root, o.isolate ?? false);
  }

  /** Contract: returns the service visible from the root scope; throws `MissingServiceError` if none is. */
  get<T>(key: KeyLike<T>, from: Scope = this.root): T {
    const p = from.lookup(keyId(key));
    if (!p) throw new MissingServiceError(keyId(key), from.name);
    return p.service as T;
  }

  has(key: KeyLike, from: Scope = this.root): boolean {
    return from.lookup(keyId(key)) !== undefined;
  }

  /** Who provides a service, as seen from `from`. */
  providerOf(key: KeyLike, from: Scope = this.root): string | undefined {
    return from.lookup(keyId(key))?.owner;
  }

  /**
   * Mounts a plugin: validates its config, then activates it now if every
   * injected service exists, else leaves it pending until they do.
   * Contract: throws `PluginMountError` naming the plugin when its config is
   * bad or its `apply` throws (whatever it registered is undone first), or
   * naming a dependent that this mount activated and that failed; an async
   * `apply` that rejects is reported by `ready()`. Returns the unmount.
   */
  mount<C>(plugin: Plugin<C>, config?: unknown, o: MountOptions = {}): Disposer {
    return this.mountAt(plugin, config, o, this.mounts++);
  }

  private mountAt(plugin: Plugin<any>, config: unknown, o: MountOptions, order: number): Disposer {
    const id = o.id ?? plugin.name;
    if (this.mounted.has(id)) throw new PluginMountError(id, new Error(`${id} is already mounted`));
    let parsed: unknown = config;
    if (plugin.config) {
      const r = plugin.config.safeParse(config ?? {});
      if (!r.success) throw new PluginMountError(id, new Error(`bad config: ${r.error.issues.map((i) => `${i.path.join('.') || '(config)'}: ${i.message}`).join('; ')}`));
      parsed = r.data;
    }
    const m: Mounted = { id, plugin, config: parsed, scope: o.scope ?? this.root, state: 'pending', effects: [], generation: 0, order };
    this.mounted.set(id, m);
    this.keepMountOrder();
    this.queue.push(m);
    const failure = this.drain();
    // A plugin that failed its own mount leaves nothing behind, not even its name.
    if (m.state === 'failed') this.mounted.delete(id);
    if (failure) throw failure;
    return () => this.unmount(id);
  }

  /** Contract: idempotent; undoes the plugin's effects in reverse order (and deactivates plugins that needed what it provided). */
  unmount(id: string): void {
    const m = this.mounted.get(id);
    if (!m) return;
    this.deactivate(m);
    this.mounted.delete(id);
  }

  /**
   * Unmount and mount again with the same config, in the same place in mount
   * order. Contract: the registries afterwards equal those of one mount, in
   * order (tool order and waterfall precedence unchanged).
   */
  reload(id: string): void {
    const m = this.mounted.get(id);
    if (!m) throw new PluginMountError(id, new Error(`${id} is not mounted`));
    this.unmount(id);
    this.mountAt(m.plugin, m.config, { id, scope: m.scope }, m.order);
  }

  /** The map iterates in mount order (status, dispose last-first, dependents deactivated newest first), also after a reload. */
  private keepMountOrder(): void {
    const all = [...this.mounted.values()];
    if (all.every((m, i) => i === 0 || all[i - 1]!.order < m.order)) return;
    this.mounted.clear();
    for (const m of all.sort((a, b) => a.order - b.order)) this.mounted.set(m.id, m);
  }

  /** Unmounts everything, last mounted first. */
  dispose(): void {
    for (const id of [...this.mounted.keys()].reverse()) this.unmount(id);
  }

  /** Contract: resolves once every async `apply` has settled; rejects with the first `PluginMountError` among them. */
  async ready(): Promise<void> {
    for (;;) {
      const running = [...this.mounted.values()].map((m) => m.running).filter((p): p is Promise<void> => p !== undefined);
      if (running.length === 0) break;
      await Promise.all(running);
    }
    const failed = [...this.mounted.values()].find((m) => m.state === 'failed');
    if (failed) throw new PluginMountError(failed.id, failed.error);
  }

  /** Whether some plugin's async `apply` is still running (a server starting): `ready()` would wait. */
  starting(): boolean {
    return [...this.mounted.values()].some((m) => m.running !== undefined);
  }

  /** Contract: pure; a mounted plugin's place in mount order (earlier is smaller), or +Infinity for an id not mounted. */
  rank(id: string): number {
    return this.mounted.get(id)?.order ?? Number.POSITIVE_INFINITY;
  }

  status(): PluginStatus[] {
    return [...this.mounted.values()].map((m) => ({
      id: m.id,
      name: m.plugin.name,
      state: m.state,
      waitingFor: m.state === 'pending' ? this.missing(m) : [],
      ...(m.error !== undefined ? { error: m.error instanceof Error ? m.error.message : String(m.error) } : {}),
    }));
  }

  private missing(m: Mounted): string[] {
    return (m.plugin.inject ?? []).map(keyId).filter((k) => !m.scope.lookup(k));
  }

  /** Activates queued plugins one at a time, so a dependent woken by a provider runs after that provider's `apply` has finished. */
  private drain(): PluginMountError | undefined {
    if (this.draining) return undefined;
    this.draining = true;
    let failure: PluginMountError | undefined;
    try {
      while (this.queue.length > 0) {
        const m = this.queue.shift()!;
        if (this.mounted.get(m.id) !== m || m.state !== 'pending' || this.missing(m).length > 0) continue;
        try {
          this.activate(m);
        } catch (err) {
          failure ??= err instanceof PluginMountError ? err : new PluginMountError(m.id, err);
        }
      }
    } finally {
      this.draining = false;
    }
    return failure;
  }

  private activate(m: Mounted): void {
    m.state = 'active';
    m.error = undefined;
    const generation = ++m.generation;
    const ctx = this.contextFor(m, generation);
    let result: void | Promise<void>;
    try {
      result = m.plugin.apply(ctx, m.config as never);
    } catch (err) {
      this.fail(m, err);
      throw new PluginMountError(m.id, err);
    }
    if (result && typeof (result as Promise<void>).then === 'function') {
      m.running = (result as Promise<void>).then(
        () => {
          if (m.generation === generation) m.running = undefined;
        },
        (err: unknown) => {
          if (m.generation !== generation) return;
          m.running = undefined;
          this.fail(m, err);
        },
      );
    }
  }

  private fail(m: Mounted, err: unknown): void {
    this.deactivate(m);
    m.state = 'failed';
    m.error = err;
  }

  private deactivate(m: Mounted): void {
    m.generation++;
    m.running = undefined;
    while (m.effects.length > 0) m.effects.pop()!();
    if (m.state === 'active') m.state = 'pending';
  }

  private contextFor(m: Mounted, generation: number): PluginContext {
    const live = () => {
      if (m.generation !== generation || this.mounted.get(m.id) !== m) throw new PluginMountError(m.id, new Error('it is no longer mounted'));
    };
    const effect = (fn: () => Disposer | void): Disposer => {
      live();
      const undo = fn() ?? (() => undefined);
      let done = false;
      const once = () => {
        if (done) return;
        done = true;
        const i = m.effects.indexOf(once);
        if (i >= 0) m.effects.splice(i, 1);
        undo();
      };
      m.effects.push(once);
      return once;
    };
    const lookup = <T>(key: KeyLike<T>): T => {
      const p = m.scope.lookup(keyId(key));
      if (!p) throw new MissingServiceError(keyId(key), m.id);
      return p.service as T;
    };
    return {
      id: m.id,
      get: lookup,
      has: (key) => m.scope.lookup(keyId(key)) !== undefined,
      effect,
      provide: (key, service) => effect(() => this.provideIn(m, keyId(key), service)),
      tools: { register: (tool) => effect(() => lookup(TOOLS).register(tool, m.id)) },
      hooks: {
        on: (hook, listener) => effect(() => lookup(HOOKS).on(hook, m.id, listener)),
        guard: (guard) => effect(() => lookup(HOOKS).guard(m.id, guard)),
      },
      prompt: { section: (section) => effect(() => lookup(PROMPT).add(section, m.id)) },
    };
  }

  private provideIn(m: Mounted, key: string, service: unknown): Disposer {
    const home = m.scope.home(key);
    const existing = home.services.get(key);
    if (existing) throw new DuplicateProviderError(key, existing.owner, m.id);
    const entry: Provided = { service, owner: m.id };
    home.services.set(key, entry);
    // Whoever was waiting for it, in this scope or below, may now activate.
    for (const other of this.mounted.values()) {
      if (other.state === 'pending' && inside(other.scope, home) && (other.plugin.inject ?? []).some((k) => keyId(k) === key)) this.queue.push(other);
    }
    // A dependent that fails here is marked failed; the mount that started this, or `ready()`, reports it.
    this.drain();
    return () => {
      if (home.services.get(key) !== entry) return;
      // Dependents that can no longer see it go back to pending first, newest first.
      for (const other of [...this.mounted.values()].reverse()) {
        if (other === m || other.state !== 'active' || !inside(other.scope, home)) continue;
        if ((other.plugin.inject ?? []).some((k) => keyId(k) === key) && other.scope.lookup(key) === entry) this.deactivate(other);
      }
      home.services.delete(key);
    };
  }
}
