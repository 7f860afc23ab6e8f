import { describe, expect, it } from 'vitest';
import { HOOKS } from '../../ports/index.js';
import { Host } from '../host.js';
import { HookRegistry } from './registry.js';

describe('HookRegistry', () => {
  it('returns idempotent disposers for listeners and guards', () => {
    const h = new HookRegistry();
    const off = h.on('pre-step', 'p', () => undefined);
    const offGuard = h.guard('g', () => undefined);
    expect(h.listeners('pre-step')).toHaveLength(1);
    expect(h.guardList()).toHaveLength(1);
    off();
    off();
    offGuard();
    expect(h.listeners('pre-step')).toHaveLength(0);
    expect(h.guardList()).toHaveLength(0);
  });

  it('every hook is dispatched by its declared mode', () => {
    const h = new HookRegistry();
    expect(h.modes['pre-step']).toBe('waterfall');
    expect(h.modes['session/entry']).toBe('emit');
    expect(h.modes['turn/end']).toBe('serial');
    expect(h.modes['session/close']).toBe('parallel');
  });

  it("a plugin's hook listeners and guards, registered through ctx.hooks, are undone in reverse order at unmount, once", () => {
    const host = new Host();
    const h = new HookRegistry();
    host.mount({ name: 'hooks', apply: (ctx) => void ctx.provide(HOOKS, h) });
    const order: string[] = [];
    const unmount = host.mount({
      name: 'p',
      inject: [HOOKS],
      apply(ctx) {
        ctx.effect(() => () => order.push('first'));
        ctx.hooks.on('tool/execute', async (_p, next) => next());
        ctx.effect(() => () => order.push('second'));
        ctx.hooks.guard(() => undefined);
        ctx.effect(() => () => order.push(`third: ${h.listeners('tool/execute').length} listener, ${h.guardList().length} guard`));
      },
    });
    h.on('tool/execute', 'other', async (_p, next) => next());
    expect(h.listeners('tool/execute').map((l) => l.owner)).toEqual(['p', 'other']);
    unmount();
    unmount();
    expect(order).toEqual(['third: 2 listener, 1 guard', 'second', 'first']);
    expect(h.listeners('tool/execute').map((l) => l.owner)).toEqual(['other']);
    expect(h.guardList()).toHaveLength(0);
  });

  it('undoes a half-done apply that throws', () => {
    const host = new Host();
    const h = new HookRegistry();
    host.mount({ name: 'hooks', apply: (ctx) => void ctx.provide(HOOKS, h) });
    expect(() =>
      host.mount({
        name: 'broken',
        inject: [HOOKS],
        apply(ctx) {
          ctx.hooks.on('pre-step', () => undefined);
          throw new Error('setup failed');
        },
      }),
    ).toThrow('plugin broken failed to mount: setup failed');
    expect(h.listeners('pre-step')).toHaveLength(0);
  });
});
