import { describe, expect, it } from 'vitest';
import { Dispatcher } from './dispatch.js';
import type { Listener } from '../ports/hooks.js';

type Table = {
  ping: { payload: string; answer: never; mode: 'emit' };
  close: { payload: string; answer: string; mode: 'parallel' };
  notify: { payload: string; answer: string; mode: 'serial' };
  stream: { payload: string; answer: string; mode: 'waterfall' };
};
const make = () => new Dispatcher<Table>({ ping: 'emit', close: 'parallel', notify: 'serial', stream: 'waterfall' });
const tick = () => new Promise((r) => setTimeout(r, 1));

describe('four dispatch modes over one registration primitive (course ch. 2)', () => {
  it('emit: fire and forget — returns before an async listener finishes, and a throwing listener stops no one', async () => {
    const d = make();
    const log: string[] = [];
    const reports: string[] = [];
    d.on('ping', 'slow', async (p) => {
      await tick();
      log.push(`slow ${p}`);
    });
    d.on('ping', 'thrower', () => {
      throw new Error('bad');
    });
    d.on('ping', 'fast', (p) => void log.push(`fast ${p}`));
    const returned = d.emit('ping', 'x', (o, p) => reports.push(`${o}: ${p}`));
    expect(returned).toBeUndefined();
    expect(log).toEqual(['fast x']);
    await tick();
    await tick();
    expect(log).toEqual(['fast x', 'slow x']);
    expect(reports).toEqual(['thrower: threw: bad']);
  });

  it('parallel: fan out, await all — every listener starts before any finishes; answers in registration order', async () => {
    const d = make();
    const log: string[] = [];
    let releaseFirst!: () => void;
    d.on('close', 'a', async () => {
      log.push('a started');
      await new Promise<void>((r) => (releaseFirst = r));
      log.push('a done');
      return 'a';
    });
    d.on('close', 'b', async () => {
      log.push('b started');
      return 'b';
    });
    d.on('close', 'c', async () => {
      throw new Error('stuck');
    });
    const reports: string[] = [];
    const all = d.parallel('close', 'bye', (o, p) => reports.push(`${o}: ${p}`));
    await tick();
    expect(log).toEqual(['a started', 'b started']);
    releaseFirst();
    expect(await all).toEqual(['a', 'b']);
    expect(log).toEqual(['a started', 'b started', 'a done']);
    expect(reports).toEqual(['c: threw: stuck']);
  });

  it('serial: await in order — the second starts only after the first has finished', async () => {
    const d = make();
    const log: string[] = [];
    d.on('notify', 'a', async () => {
      log.push('a started');
      await tick();
      log.push('a done');
      return 'a';
    });
    d.on('notify', 'b', async () => {
      log.push('b started');
      return 'b';
    });
    expect(await d.serial('notify', 'n', () => undefined)).toEqual(['a', 'b']);
    expect(log).toEqual(['a started', 'a done', 'b started']);
  });

  it('waterfall: each listener gets the payload and next(); one may answer without next() and own the result', async () => {
    const d = make();
    d.on('stream', 'cache', async (p, next) => (p === 'cached' ? 'from cache' : next()));
    d.on('stream', 'upper', async (p, next) => next(p.toUpperCase()));
    const run = (p: string) => d.waterfall('stream', p, async (q) => `model(${q})`, { report: () => undefined });
    expect(await run('cached')).toBe('from cache');
    expect(await run('hi')).toBe('model(HI)');
  });

  it('a hook is called only by its declared mode, and registration checks the name', () => {
    const d = make();
    expect(() => d.emit('close' as 'ping', 'x', () => undefined)).toThrow('hook close is dispatched by parallel, not emit');
    expect(() => d.on('nope' as 'ping', 'p', () => undefined)).toThrow('no such hook: nope');
  });
});

describe('the “forgets next()” bug (course ch. 2)', () => {
  /** The bug, as a chain without the fix would run it: a listener that returns nothing ends the chain there. */
  async function naiveChain(listeners: Listener<number, number>[], payload: number, terminal: (p: number) => Promise<number>): Promise<number | undefined> {
    const at = async (i: number, p: number): Promise<number | undefined> => {
      const l = listeners[i];
      if (!l) return terminal(p);
      return (await l(p, async (q) => (await at(i + 1, q ?? p)) as number)) ?? undefined;
    };
    return at(0, payload);
  }

  const seen: string[] = [];
  const chain: Listener<number, number>[] = [
    async (p, next) => next(p + 1),
    () => void seen.push('forgetful ran'), // neither calls next() nor answers
    async (p, next) => {
      seen.push('downstream ran');
      return next(p * 10);
    },
  ];

  it('shown: without the fix, the forgetful listener silently drops the downstream listener and the result', async () => {
    seen.length = 0;
    expect(await naiveChain(chain, 1, async (p) => p)).toBeUndefined();
    expect(seen).toEqual(['forgetful ran']);
  });

  it('fixed: the dispatcher reports the forgetful listener by name, skips it, and the downstream listener still runs', async () => {
    seen.length = 0;
    const d = make();
    const numbers = d as unknown as Dispatcher<{ stream: { payload: number; answer: number; mode: 'waterfall' } }>;
    const owners = ['plus-one', 'forgetful', 'times-ten'];
    chain.forEach((l, i) => numbers.on('stream', owners[i]!, l));
    const reports: string[] = [];
    expect(await numbers.waterfall('stream', 1, async (p) => p, { report: (o, p) => reports.push(`${o}: ${p}`) })).toBe(20);
    expect(seen).toEqual(['forgetful ran', 'downstream ran']);
    expect(reports).toEqual(['forgetful: neither called next() nor returned a decision; skipped']);
  });
});
