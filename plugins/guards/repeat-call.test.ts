import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../test/helpers/harness.js';
import type { EntryOf } from '../../log/entries.js';
import { trackRepeat, type RepeatState } from './repeat-call.js';

const run = (calls: { name: string; args: unknown }[], o = {}) => {
  let state: RepeatState = { count: 0 };
  const reached: (number | undefined)[] = [];
  for (const c of calls) {
    const r = trackRepeat(state, c, o);
    state = r.state;
    reached.push(r.reached);
  }
  return reached;
};

describe('trackRepeat', () => {
  it('fires at 3, 5 and 8 consecutive identical calls, comparing key-sorted arguments', () => {
    const calls = Array.from({ length: 9 }, (_, i) => ({ name: 'grep', args: i % 2 ? { path: '.', pattern: 'x' } : { pattern: 'x', path: '.' } }));
    expect(run(calls)).toEqual([undefined, undefined, 3, undefined, 5, undefined, undefined, 8, undefined]);
  });

  it('restarts the chain on a different call or different arguments', () => {
    const a = { name: 'bash', args: { command: 'npm test' } };
    const b = { name: 'bash', args: { command: 'npm test -- --watch' } };
    expect(run([a, a, b, a, a, a])).toEqual([undefined, undefined, undefined, undefined, undefined, 3]);
  });

  it('ignores excluded bookkeeping tools: they neither count nor break the chain', () => {
    const a = { name: 'bash', args: { command: 'make' } };
    const todo = { name: 'todo', args: { items: [] } };
    expect(run([a, todo, a, todo, todo, a], { exclude: ['todo'] })).toEqual([undefined, undefined, undefined, undefined, undefined, 3]);
    expect(run([todo, todo, todo], { exclude: ['todo'] })).toEqual([undefined, undefined, undefined]);
  });
});

let h: Harness | undefined;
afterEach(() => h?.cleanup());

describe('the repeat-call guard in a session', () => {
  it('injects an advisory after the results of the step that reached a threshold, and never blocks; denied calls count', async () => {
    // Under `never` with the sandbox off, bash is denied every time (SANDBOX_OFF, ADR 0052), and still counts.
    h = createHarness((_req, i) => (i < 5 ? { toolCalls: [{ name: 'bash', arguments: { command: 'touch a.txt' } }] } : { text: 'giving up' }), { approval: 'never' });
    const out = await h.session.run('write it');
    expect(out.reason).toBe('completed');
    const e = h.entries();
    const advisories = e.filter((x): x is EntryOf<'user/message'> => x.kind === 'user/message' && x.origin === 'inject');
    expect(advisories.map((a) => a.text.match(/call (\d+) times/)?.[1])).toEqual(['3', '5']);
    // The first advisory lands after step 3's result and before step 4 starts.
    const at = e.indexOf(advisories[0]!);
    const result3 = e.findIndex((x) => x.kind === 'tool/result' && x.callId === 't1.s3.c1');
    const step4 = e.findIndex((x) => x.kind === 'step/start' && x.step === 't1.s4');
    expect(result3).toBeLessThan(at);
    expect(at).toBeLessThan(step4);
    // Every call still got its own verdict: denied by the policy, not by the guard.
    const results = e.filter((x): x is EntryOf<'tool/result'> => x.kind === 'tool/result');
    expect(results.map((r) => r.code)).toEqual(['DENIED', 'DENIED', 'DENIED', 'DENIED', 'DENIED']);
    // The model saw the advisory in its next request.
    expect(JSON.stringify(h.requests[3]!.request.messages)).toContain('3 times in a row');
  });

  it('can be left out', async () => {
    h = createHarness((_req, i) => (i < 3 ? { toolCalls: [{ name: 'list_dir', arguments: {} }] } : { text: 'done' }), { repeatCall: false });
    await h.session.run('look');
    expect(h.entries().some((x) => x.kind === 'user/message' && x.origin === 'inject')).toBe(false);
  });
});
