/**
 * The session's own hooks (ports/hooks.ts): `session/entry` sees every entry as it
 * is appended, in log order; `turn/end` listeners are awaited in turn order before
 * the session reports idle; a listener that throws is reported (`hook/report`),
 * never fatal, and the log still verifies.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { verifyLog } from '../log/verify.js';
import type { Plugin } from '../plugins/host.js';
import type { TurnEndPayload } from '../ports/hooks.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the session/entry hook', () => {
  it('sees every entry as it is appended, in seq order, exactly once', async () => {
    const seen: number[] = [];
    const plugin: Plugin = { name: 'watcher', apply: (ctx) => void ctx.hooks.on('session/entry', (e) => void seen.push(e.seq)) };
    h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: 'glob', arguments: { pattern: '*' } }] } : { text: 'done' }), { plugins: [plugin] });
    await h.session.run('list the files');
    // Entries appended once the plugin had mounted: all of them, from the first it saw to the last.
    const all = h.entries().map((e) => e.seq);
    expect(seen.length).toBeGreaterThan(5);
    expect(seen).toEqual(all.slice(all.indexOf(seen[0]!)));
    expect(h.entries().find((e) => e.seq === seen[0])?.kind).not.toBe('turn/end');
  });

  it("hands each listener the entry's line exactly as the store got it (ADR 0098)", async () => {
    const lines = new Map<number, string>();
    const plugin: Plugin = { name: 'watcher', apply: (ctx) => void ctx.hooks.on('session/entry', (e, line) => void lines.set(e.seq, line)) };
    h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: 'glob', arguments: { pattern: '*' } }] } : { text: 'done' }), { plugins: [plugin] });
    await h.session.run('list the files');
    expect(lines.size).toBeGreaterThan(5);
    const stored = new Map(h.store.lines.map((l) => [(JSON.parse(l) as { seq: number }).seq, l]));
    for (const [seq, line] of lines) expect(line, `seq ${seq}`).toBe(stored.get(seq));
  });

  it('a listener that throws is reported once per entry it threw on, never re-emitted, and the log verifies', async () => {
    const plugin: Plugin = {
      name: 'thrower',
      apply: (ctx) =>
        void ctx.hooks.on('session/entry', (e) => {
          if (e.kind === 'turn/start') throw new Error('no thanks');
        }),
    };
    h = createHarness(() => ({ text: 'ok' }), { plugins: [plugin] });
    const out = await h.session.run('hello');
    expect(out.reason).toBe('completed');
    const reports = h.entries().filter((e) => e.kind === 'hook/report');
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ hook: 'session/entry', listener: 'thrower', problem: 'threw: no thanks' });
    expect(verifyLog(h.entries()).ok).toBe(true);
  });
});

describe('the turn/end hook', () => {
  it('is awaited in turn order before the session reports idle', async () => {
    const events: string[] = [];
    const plugin: Plugin = {
      name: 'slow-end',
      apply: (ctx) =>
        void ctx.hooks.on('turn/end', async (p: TurnEndPayload) => {
          events.push(`start ${p.turn} ${p.reason} ${p.steps}`);
          await tick(30);
          events.push(`end ${p.turn}`);
        }),
    };
    h = createHarness(() => ({ text: 'ok' }), { plugins: [plugin] });
    void h.session.send('one');
    void h.session.send('two');
    await h.session.idle();
    events.push('idle');
    expect(events).toEqual(['start t1 completed 1', 'end t1', 'start t2 completed 1', 'end t2', 'idle']);
    // The turn/end entry was durable before the listeners ran.
    expect(h.entries().filter((e) => e.kind === 'turn/end')).toHaveLength(2);
  });

  it('gets the code of a turn that ended in error, and a throw is reported with the turn', async () => {
    const got: TurnEndPayload[] = [];
    const plugin: Plugin = {
      name: 'end-watch',
      apply: (ctx) => {
        ctx.hooks.on('turn/end', (p: TurnEndPayload) => void got.push(p));
        ctx.hooks.on('turn/end', () => {
          throw new Error('boom');
        });
      },
    };
    h = createHarness(() => ({ error: { code: 'BAD_REQUEST', status: 400, message: 'bad request' } }), { plugins: [plugin] });
    const out = await h.session.run('go');
    expect(out.reason).toBe('error');
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ turn: out.turn, reason: 'error', code: out.code });
    expect(h.entries().find((e) => e.kind === 'hook/report')).toMatchObject({ hook: 'turn/end', listener: 'end-watch', turn: out.turn, problem: 'threw: boom' });
    expect(verifyLog(h.entries()).ok).toBe(true);
  });
});
