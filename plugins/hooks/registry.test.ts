import { describe, expect, it } from 'vitest';
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

  it('unmounts a plugin by undoing its registrations in reverse order, once', () => {
    const h = new HookRegistry();
    const order: string[] = [];
    const unmount = h.mount({
      name: 'p',
      setup(api) {
        api.defer(() => order.push('first'));
        api.on('tool/execute', async (_p, next) => next());
        api.defer(() => order.push('second'));
        api.guard(() => undefined);
        api.defer(() => order.push(`third: ${h.listeners('tool/execute').length} listener, ${h.guardList().length} guard`));
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

  it('undoes a half-done setup that throws', () => {
    const h = new HookRegistry();
    expect(() =>
      h.mount({
        name: 'broken',
        setup(api) {
          api.on('pre-step', () => undefined);
          throw new Error('setup failed');
        },
      }),
    ).toThrow('setup failed');
    expect(h.listeners('pre-step')).toHaveLength(0);
  });

  it('gives plugins the host bound later', () => {
    const h = new HookRegistry();
    const got: string[] = [];
    h.mount({ name: 'p', setup: (api) => api.defer(() => api.inject('bye')) })();
    h.bind({ inject: (t) => got.push(t) });
    h.mount({ name: 'q', setup: (api) => api.defer(() => api.inject('bye')) })();
    expect(got).toEqual(['bye']);
  });
});
