import { describe, expect, it } from 'vitest';
import { stricter } from './hooks/decisions.js';
import type { Decision } from '../ports/approval.js';
import type { Listener } from '../ports/hooks.js';
import { runWaterfall, type Registered } from './waterfall.js';

const reg = <P, R>(owner: string, listener: Listener<P, R>): Registered<P, R> => ({ owner, listener });

describe('runWaterfall', () => {
  it('runs listeners in order around the terminal; a listener may rewrite the payload for the rest', async () => {
    const seen: string[] = [];
    const out = await runWaterfall<string, string>(
      [
        reg('a', async (p, next) => {
          seen.push(`a:${p}`);
          return `a(${await next(p.toUpperCase())})`;
        }),
        reg('b', async (p, next) => {
          seen.push(`b:${p}`);
          await next();
        }),
      ],
      'x',
      async (p) => `t:${p}`,
      { hook: 'h', report: () => undefined },
    );
    expect(out).toBe('a(t:X)');
    expect(seen).toEqual(['a:x', 'b:X']);
  });

  it('reports a listener that neither calls next() nor decides, and goes on without it', async () => {
    const reports: string[] = [];
    const out = await runWaterfall<number, number>([reg<number, number>('silent', () => undefined), reg<number, number>('plus', async (p, next) => (await next(p + 1)) * 10)], 1, async (p) => p, {
      hook: 'h',
      report: (owner, problem) => reports.push(`${owner}: ${problem}`),
    });
    expect(out).toBe(20);
    expect(reports).toEqual(['silent: neither called next() nor returned a decision; skipped']);
  });

  it('lets a wrapper call next() more than once (retry) and keeps its own answer', async () => {
    let calls = 0;
    const out = await runWaterfall<null, string>(
      [
        reg('retry', async (_p, next) => {
          const first = await next();
          return first === 'fail' ? next() : first;
        }),
      ],
      null,
      async () => (++calls === 1 ? 'fail' : 'ok'),
      { hook: 'h', report: () => undefined },
    );
    expect(out).toBe('ok');
    expect(calls).toBe(2);
  });

  it('clamps: a listener cannot loosen what the rest of the chain said', async () => {
    const loosen: Listener<null, Decision> = async (_p, next) => {
      await next();
      return { kind: 'allow' };
    };
    const out = await runWaterfall<null, Decision>([reg('loosen', loosen)], null, async () => ({ kind: 'deny', reason: 'no' }), {
      hook: 'h',
      clamp: stricter,
      report: () => undefined,
    });
    expect(out).toEqual({ kind: 'deny', reason: 'no' });
  });

  it('turns a throw or a malformed verdict into onThrow, and reports both', async () => {
    const reports: string[] = [];
    const o = {
      hook: 'h',
      accepts: (v: unknown): v is Decision => (v as Decision)?.kind === 'allow' || (v as Decision)?.kind === 'deny',
      onThrow: (owner: string): Decision => ({ kind: 'deny', reason: `${owner} failed` }),
      report: (owner: string) => reports.push(owner),
    };
    const thrown = await runWaterfall<null, Decision>([reg<null, Decision>('boom', () => { throw new Error('x'); })], null, async () => ({ kind: 'allow' }), o);
    const bad = await runWaterfall<null, Decision>([reg<null, Decision>('bad', () => ({ kind: 'alow' }) as unknown as Decision)], null, async () => ({ kind: 'allow' }), o);
    expect(thrown).toEqual({ kind: 'deny', reason: 'boom failed' });
    expect(bad).toEqual({ kind: 'deny', reason: 'bad failed' });
    expect(reports).toEqual(['boom', 'bad']);
  });

  it('rethrows without onThrow', async () => {
    await expect(runWaterfall<null, number>([reg<null, number>('boom', () => { throw new Error('kaput'); })], null, async () => 1, { hook: 'h', report: () => undefined })).rejects.toThrow('kaput');
  });
});
