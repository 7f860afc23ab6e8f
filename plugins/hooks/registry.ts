/**
 * Where hooks and guards are registered. Every registration returns its
 * disposer; a plugin is a named group of registrations, and unmounting it
 * undoes them all in reverse order.
 */
import type { Listener, Registered } from '../waterfall.js';
import type { Guard, HookMap, HookName } from '../../ports/hooks.js';

export type Disposer = () => void;

/** What the host offers plugins besides registration. */
export interface PluginHost {
  /** Queues context for the model's next step (the session's `inject` path); it does not wake an idle session. */
  inject(text: string): void;
}

export interface PluginApi extends PluginHost {
  on<K extends HookName>(hook: K, listener: Listener<HookMap[K][0], HookMap[K][1]>): Disposer;
  guard(guard: Guard): Disposer;
  /** Runs `cleanup` when the plugin is unmounted, in reverse order with its registrations. */
  defer(cleanup: Disposer): void;
}

export interface Plugin {
  name: string;
  setup(api: PluginApi): void;
}

type AnyRegistered = Registered<unknown, unknown>;

export class HookRegistry {
  private readonly hooks = new Map<HookName, AnyRegistered[]>();
  private guards: { owner: string; guard: Guard }[] = [];
  private host: PluginHost;

  constructor(host: PluginHost = { inject: () => undefined }) {
    this.host = host;
  }

  /** Lets the session fill in the host once it exists (plugins mounted earlier see the change). */
  bind(host: PluginHost): void {
    this.host = host;
  }

  /** Contract: the disposer is idempotent. */
  on<K extends HookName>(hook: K, owner: string, listener: Listener<HookMap[K][0], HookMap[K][1]>): Disposer {
    const entry = { owner, listener } as AnyRegistered;
    this.hooks.set(hook, [...(this.hooks.get(hook) ?? []), entry]);
    return () => this.hooks.set(hook, (this.hooks.get(hook) ?? []).filter((e) => e !== entry));
  }

  /** Contract: the disposer is idempotent. */
  guard(owner: string, guard: Guard): Disposer {
    const entry = { owner, guard };
    this.guards = [...this.guards, entry];
    return () => {
      this.guards = this.guards.filter((g) => g !== entry);
    };
  }

  /** A snapshot: registrations made while a chain runs take effect from the next call. */
  listeners<K extends HookName>(hook: K): readonly Registered<HookMap[K][0], HookMap[K][1]>[] {
    return (this.hooks.get(hook) ?? []) as unknown as Registered<HookMap[K][0], HookMap[K][1]>[];
  }

  guardList(): readonly { owner: string; guard: Guard }[] {
    return this.guards;
  }

  /**
   * Runs the plugin's setup; returns the unmount. If setup throws, what it
   * registered so far is undone and the error propagates.
   * Contract: unmount disposes in reverse registration order, once.
   */
  mount(plugin: Plugin): Disposer {
    const undo: Disposer[] = [];
    const unmount = () => {
      while (undo.length > 0) undo.pop()!();
    };
    const api: PluginApi = {
      on: (hook, listener) => {
        const d = this.on(hook, plugin.name, listener);
        undo.push(d);
        return d;
      },
      guard: (g) => {
        const d = this.guard(plugin.name, g);
        undo.push(d);
        return d;
      },
      defer: (cleanup) => void undo.push(cleanup),
      inject: (text) => this.host.inject(text),
    };
    try {
      plugin.setup(api);
    } catch (err) {
      unmount();
      throw err;
    }
    return unmount;
  }
}
