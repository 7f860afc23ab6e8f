/** A provider definition (`ports/provider.ts`) mounted as a plugin: it provides its seam's service, built from the row's config. */
import type { ProviderDefinition } from '../ports/provider.js';
import type { Plugin } from './host.js';

export function providerPlugin<S, C>(def: ProviderDefinition<S, C>): Plugin<C> {
  return {
    name: `${def.seam.id}/${def.name}`,
    provides: [def.seam],
    ...(def.inject ? { inject: def.inject } : {}),
    config: def.config,
    apply(ctx, config) {
      const cleanups: (() => void)[] = [];
      const service = def.create(config, { get: ctx.get, has: ctx.has, onDispose: (f) => void cleanups.push(f) });
      // Registered before the provide, so it runs after it at unmount: dependents are gone before the service is freed.
      ctx.effect(() => () => {
        for (const f of cleanups.reverse()) f();
      });
      ctx.provide(def.seam, service);
    },
  };
}
