import { afterEach, describe, expect, it } from 'vitest';
import type { EntryOf } from '../log/entries.js';
import type { Plugin } from '../plugins/host.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const retries = (hh: Harness) => hh.entries().filter((e): e is EntryOf<'model/retry'> => e.kind === 'model/retry');

describe('the request-error hook: recovery by normalized code, as listeners', () => {
  it('the built-in retry listener (a row) retries a retryable code with its backoff, and each retry is logged', async () => {
    h = createHarness((_r, i) => (i < 2 ? { error: { code: 'RATE_LIMIT', message: 'slow down' } } : { text: 'ok at last' }), { retry: { maxRetries: 3, baseDelayMs: 10, maxDelayMs: 1000, retryable: ['RATE_LIMIT'] } });
    expect(await h.session.run('go')).toMatchObject({ reason: 'completed' });
    expect(retries(h).map((r) => [r.attempt, r.code, r.delayMs])).toEqual([
      [1, 'RATE_LIMIT', 10],
      [2, 'RATE_LIMIT', 20],
    ]);
  });

  it('a plugin listener inserted before the retry row gives up at once on a code the built-in would retry', async () => {
    const giveUpOnRateLimit: Plugin = {
      name: 'no-patience',
      apply: (ctx) => void ctx.hooks.on('request-error', async (p, next) => (p.code === 'RATE_LIMIT' ? { kind: 'give-up' } : next())),
    };
    h = createHarness(() => ({ error: { code: 'RATE_LIMIT', message: 'slow down' } }), {
      // Listeners run in row order: this one is inserted before the retry row.
      patch: [{ insert: true, id: 'recovery:no-patience', use: './no-patience.js', before: 'recovery:retry' }],
      loaded: new Map([['./no-patience.js', giveUpOnRateLimit]]),
    });
    expect(await h.session.run('go')).toMatchObject({ reason: 'error', code: 'RATE_LIMIT' });
    expect(retries(h)).toEqual([]);
  });

  it('a plugin can make a code the built-ins give up on recoverable: retry AUTH once after refreshing a token', async () => {
    let refreshed = 0;
    const refresh: Plugin = {
      name: 'refresh-token',
      apply: (ctx) =>
        void ctx.hooks.on('request-error', async (p, next) => {
          if (p.code !== 'AUTH' || p.failures > 1) return next();
          refreshed++;
          return { kind: 'retry', delayMs: 0 };
        }),
    };
    h = createHarness((_r, i) => (i === 0 ? { error: { code: 'AUTH', message: 'expired' } } : { text: 'in' }), { plugins: [refresh] });
    expect(await h.session.run('go')).toMatchObject({ reason: 'completed' });
    expect(refreshed).toBe(1);
    expect(retries(h).map((r) => r.code)).toEqual(['AUTH']);
  });

  it('the built-in overflow listener has the turn compact and try again, once; without it (row removed) the overflow ends the turn', async () => {
    const overflowThenOk = (_r: unknown, i: number) => (i === 0 ? { error: { code: 'CONTEXT_WINDOW_EXCEEDED' as const, message: 'too long' } } : { text: 'fits now' });
    h = createHarness(overflowThenOk, { contextWindow: 4096 });
    await h.session.run('go');
    const reactive = h.entries().find((e): e is EntryOf<'compaction/start'> => e.kind === 'compaction/start');
    expect(reactive?.trigger).toBe('reactive');
    h.cleanup();
    h = createHarness(overflowThenOk, { contextWindow: 4096, patch: [{ id: 'recovery:overflow', remove: true }] });
    expect(await h.session.run('go')).toMatchObject({ reason: 'error', code: 'CONTEXT_WINDOW_EXCEEDED' });
    expect(h.entries().some((e) => e.kind === 'compaction/start')).toBe(false);
  });

  it('a listener that throws is reported by name and gives up; the turn ends with the failure, the session goes on', async () => {
    h = createHarness((_r, i) => (i === 0 ? { error: { code: 'AUTH', message: 'bad key' } } : { text: 'later' }), {
      plugins: [{ name: 'broken-recovery', apply: (ctx) => void ctx.hooks.on('request-error', () => { throw new Error('no idea'); }) }],
    });
    expect(await h.session.run('go')).toMatchObject({ reason: 'error', code: 'AUTH' });
    expect(h.entries().find((e) => e.kind === 'hook/report')).toMatchObject({ hook: 'request-error', listener: 'broken-recovery', problem: 'threw: no idea' });
    expect(await h.session.run('again')).toMatchObject({ reason: 'completed' });
  });
});
