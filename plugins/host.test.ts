import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DuplicateProviderError, PluginMountError } from './host-errors.js';
import { Host, type Plugin } from './host.js';
import { serviceKey } from '../ports/service.js';

/** A registry service like the tools one: register returns its disposer. */
class Names {
  readonly list: string[] = [];
  register(name: string): () => void {
    this.list.push(name);
    return () => {
      const i = this.list.indexOf(name);
      if (i >= 0) this.list.splice(i, 1);
    };
  }
}
const NAMES = serviceKey<Names>('names');
const CLOCK = serviceKey<() => number>('clock');

const registry: Plugin = { name: 'names', provides: [NAMES], apply: (ctx) => void ctx.provide(NAMES, new Names()) };
const registering = (name: string, ...items: string[]): Plugin => ({
  name,
  inject: [NAMES],
  apply(ctx) {
    for (const item of items) ctx.effect(() => ctx.get(NAMES).register(item));
  },
});

describe('Host: effects and unmount (course ch. 2)', () => {
  it('unmounting a plugin leaves zero trace while a sibling’s effects survive', () => {
    const host = new Host();
    const order: string[] = [];
    host.mount(registry);
    host.mount(registering('sibling', 's1'));
    const unmount = host.mount({
      name: 'p',
      inject: [NAMES],
      apply(ctx) {
        ctx.effect(() => ctx.get(NAMES).register('p1'));
        ctx.effect(() => () => order.push('first effect undone'));
        ctx.effect(() => ctx.get(NAMES).register('p2'));
        ctx.effect(() => () => order.push(`last effect undone while names hold ${ctx.get(NAMES).list.join(',')}`));
      },
    });
    expect(host.get(NAMES).list).toEqual(['s1', 'p1', 'p2']);
    unmount();
    unmount();
    expect(order).toEqual(['last effect undone while names hold s1,p1,p2', 'first effect undone']);
    expect(host.get(NAMES).list).toEqual(['s1']);
    expect(host.status().map((s) => s.id)).toEqual(['names', 'sibling']);
  });

  it('an effect’s own disposer runs it early, once, and unmount does not run it again', () => {
    const host = new Host();
    let undone = 0;
    let early: () => void = () => undefined;
    const unmount = host.mount({ name: 'p', apply: (ctx) => void (early = ctx.effect(() => () => undone++)) });
    early();
    early();
    unmount();
    expect(undone).toBe(1);
  });
});

describe('Host: inject-driven order (course ch. 2)', () => {
  it('registering the dependency after the dependent still activates it', () => {
    const host = new Host();
    host.mount(registering('late-tools', 'read_file'));
    expect(host.status()).toEqual([{ id: 'late-tools', name: 'late-tools', state: 'pending', waitingFor: ['names'] }]);
    host.mount(registry);
    expect(host.status().find((s) => s.id === 'late-tools')?.state).toBe('active');
    expect(host.get(NAMES).list).toEqual(['read_file']);
  });

  it('a dependent goes back to pending when its dependency is unmounted, and comes back with it', () => {
    const host = new Host();
    const unmountRegistry = host.mount(registry);
    host.mount(registering('tools', 'a'));
    unmountRegistry();
    expect(host.status()).toEqual([{ id: 'tools', name: 'tools', state: 'pending', waitingFor: ['names'] }]);
    host.mount(registry);
    expect(host.get(NAMES).list).toEqual(['a']);
  });

  it('a dependent woken by a provider runs after the provider’s apply has finished', () => {
    const host = new Host();
    const seen: string[] = [];
    host.mount({ name: 'dep', inject: [NAMES], apply: (ctx) => void seen.push(`dep sees ${ctx.get(NAMES).list.join(',')}`) });
    host.mount({
      name: 'provider',
      apply(ctx) {
        const names = new Names();
        ctx.provide(NAMES, names);
        names.register('registered after provide');
        seen.push('provider done');
      },
    });
    expect(seen).toEqual(['provider done', 'dep sees registered after provide']);
  });
});

describe('Host: reload (course ch. 2)', () => {
  it('reloading twice in a row leaves the registry identical to a single mount', () => {
    const once = new Host();
    once.mount(registry);
    once.mount(registering('p', 'x', 'y'));
    once.mount(registering('q', 'z'));

    const twice = new Host();
    twice.mount(registry);
    twice.mount(registering('p', 'x', 'y'));
    twice.mount(registering('q', 'z'));
    twice.reload('p');
    twice.reload('p');
    expect([...twice.get(NAMES).list].sort()).toEqual([...once.get(NAMES).list].sort());
    expect(twice.get(NAMES).list).toHaveLength(3);
    expect(twice.status().map((s) => [s.id, s.state]).sort()).toEqual(once.status().map((s) => [s.id, s.state]).sort());
  });

  it('reloading a provider reactivates its dependents against the new instance', () => {
    const host = new Host();
    host.mount(registry);
    host.mount(registering('p', 'x'));
    const before = host.get(NAMES);
    host.reload('names');
    expect(host.get(NAMES)).not.toBe(before);
    expect(host.get(NAMES).list).toEqual(['x']);
  });
});

describe('Host: one implementation per seam (course ch. 3)', () => {
  it('a second provider registration throws, naming both providers', () => {
    const host = new Host();
    host.mount({ name: 'system-clock', apply: (ctx) => void ctx.provide(CLOCK, () => 1) }, undefined, { id: 'clock' });
    let error: unknown;
    try {
      host.mount({ name: 'fixed-clock', apply: (ctx) => void ctx.provide(CLOCK, () => 2) }, undefined, { id: 'clock2' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(PluginMountError);
    expect((error as PluginMountError).cause).toBeInstanceOf(DuplicateProviderError);
    expect((error as Error).message).toBe('plugin clock2 failed to mount: service clock has two providers: clock and clock2 (one provider per service)');
    expect(host.get(CLOCK)()).toBe(1);
    expect(host.status().map((s) => s.id)).toEqual(['clock']);
  });
});

describe('Host: failures at mount', () => {
  it('a plugin that throws in apply is one error naming it, and leaves nothing half-mounted', () => {
    const host = new Host();
    host.mount(registry);
    expect(() =>
      host.mount({
        name: 'broken',
        inject: [NAMES],
        apply(ctx) {
          ctx.effect(() => ctx.get(NAMES).register('half'));
          ctx.provide(CLOCK, () => 0);
          throw new Error('no licence file');
        },
      }),
    ).toThrow('plugin broken failed to mount: no licence file');
    expect(host.get(NAMES).list).toEqual([]);
    expect(host.has(CLOCK)).toBe(false);
    expect(host.status().map((s) => s.id)).toEqual(['names']);
  });

  it('a config failing the plugin’s schema is refused before apply runs, naming the plugin and the field', () => {
    const host = new Host();
    let applied = false;
    const p: Plugin<{ timeoutMs: number }> = { name: 'fetcher', config: z.strictObject({ timeoutMs: z.int().positive() }), apply: () => void (applied = true) };
    expect(() => host.mount(p, { timeoutMs: -1 }, { id: 'tool:fetch' })).toThrow(/^plugin tool:fetch failed to mount: bad config: timeoutMs: /);
    expect(applied).toBe(false);
  });

  it('a dependent that fails when its dependency arrives is named, and the provider stays', () => {
    const host = new Host();
    host.mount({ name: 'needy', inject: [NAMES], apply: () => { throw new Error('boom'); } });
    expect(() => host.mount(registry)).toThrow('plugin needy failed to mount: boom');
    expect(host.has(NAMES)).toBe(true);
    expect(host.status().find((s) => s.id === 'needy')).toMatchObject({ state: 'failed', error: 'boom' });
  });

  it('an async apply is awaited by ready(), and a rejection undoes its effects and is reported', async () => {
    const host = new Host();
    host.mount(registry);
    host.mount({
      name: 'slow',
      inject: [NAMES],
      async apply(ctx) {
        await new Promise((r) => setTimeout(r, 5));
        ctx.effect(() => ctx.get(NAMES).register('slow-tool'));
      },
    });
    expect(host.get(NAMES).list).toEqual([]);
    await host.ready();
    expect(host.get(NAMES).list).toEqual(['slow-tool']);

    host.mount({
      name: 'mcp',
      inject: [NAMES],
      async apply(ctx) {
        ctx.effect(() => ctx.get(NAMES).register('mcp-tool'));
        await Promise.resolve();
        throw new Error('server exited');
      },
    });
    await expect(host.ready()).rejects.toThrow('plugin mcp failed to mount: server exited');
    expect(host.get(NAMES).list).toEqual(['slow-tool']);
  });

  it('starting() is true while an async apply runs; rank() is mount order, and a reload keeps a plugin\'s place', async () => {
    const host = new Host();
    host.mount(registry);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    host.mount({ name: 'slow', inject: [NAMES], apply: () => gate });
    host.mount({ name: 'quick', inject: [NAMES], apply: () => undefined });
    expect(host.starting()).toBe(true);
    expect([host.rank('slow'), host.rank('quick')]).toEqual([1, 2]);
    expect(host.rank('nobody')).toBe(Number.POSITIVE_INFINITY);
    release();
    await host.ready();
    expect(host.starting()).toBe(false);
    host.reload('slow');
    expect([host.rank('slow'), host.rank('quick')]).toEqual([1, 2]);
    expect(host.status().map((s) => s.id)).toEqual(['names', 'slow', 'quick']);
  });

  it('an async apply that finishes after its unmount registers nothing', async () => {
    const host = new Host();
    host.mount(registry);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let late: unknown;
    const unmount = host.mount({
      name: 'late',
      inject: [NAMES],
      async apply(ctx) {
        await gate;
        try {
          ctx.effect(() => ctx.get(NAMES).register('ghost'));
        } catch (err) {
          late = err;
        }
      },
    });
    unmount();
    release();
    await host.ready();
    expect(host.get(NAMES).list).toEqual([]);
    expect(late).toBeInstanceOf(PluginMountError);
  });
});

describe('Host: isolate (course ch. 11)', () => {
  it('a group that declares isolate gets its own private service instance, invisible to sibling groups', () => {
    const host = new Host();
    host.mount({ name: 'clock', apply: (ctx) => void ctx.provide(CLOCK, () => 1) });
    const cheap = host.scope('cheap', { isolate: true });
    const other = host.scope('other');
    host.mount({ name: 'fixed-clock', apply: (ctx) => void ctx.provide(CLOCK, () => 2) }, undefined, { id: 'cheap:clock', scope: cheap });
    const seen: Record<string, number> = {};
    const reader = (name: string): Plugin => ({ name, inject: [CLOCK], apply: (ctx) => void (seen[name] = ctx.get(CLOCK)()) });
    host.mount(reader('inside'), undefined, { scope: cheap });
    host.mount(reader('sibling'), undefined, { scope: other });
    host.mount(reader('root'));
    expect(seen).toEqual({ inside: 2, sibling: 1, root: 1 });
    expect(host.get(CLOCK)()).toBe(1);
  });

  it('without isolate, a group’s provider lands in the parent and collides with the parent’s', () => {
    const host = new Host();
    host.mount({ name: 'clock', apply: (ctx) => void ctx.provide(CLOCK, () => 1) });
    const open = host.scope('open');
    expect(() => host.mount({ name: 'fixed-clock', apply: (ctx) => void ctx.provide(CLOCK, () => 2) }, undefined, { id: 'open:clock', scope: open })).toThrow(
      'service clock has two providers: clock and open:clock',
    );
  });

  it('isolating only some keys shares the rest with the parent', () => {
    const host = new Host();
    const g = host.scope('g', { isolate: ['clock'] });
    host.mount({ name: 'both', apply: (ctx) => (ctx.provide(CLOCK, () => 3), void ctx.provide(NAMES, new Names())) }, undefined, { scope: g });
    expect(host.has(CLOCK)).toBe(false);
    expect(host.has(NAMES)).toBe(true);
  });
});
