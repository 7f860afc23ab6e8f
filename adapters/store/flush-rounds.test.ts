/** The rounds of flushes (ADR 0073), with a round that records its members and settles when the test says. */
import { expect, it } from 'vitest';
import { createFlushRounds } from './flush-rounds.js';

const tick = () => new Promise((r) => setImmediate(r));

function recording() {
  const rounds: string[][] = [];
  let finish: ((outcomes: (Error | undefined)[] | Error) => void) | undefined;
  let active = 0;
  let overlapped = false;
  const r = createFlushRounds<string>(
    (members) =>
      new Promise((resolve, reject) => {
        rounds.push([...members]);
        if (++active > 1) overlapped = true;
        finish = (o) => {
          active--;
          if (o instanceof Error) reject(o);
          else resolve(o);
        };
      }),
  );
  return { r, rounds, finish: (o: (Error | undefined)[] | Error) => finish!(o), overlapped: () => overlapped };
}

it('a tick\'s requests are one round, each member once; requests while it runs are the next round, which waits for it', async () => {
  const t = recording();
  const a1 = t.r.request('a');
  const a2 = t.r.request('a');
  const b = t.r.request('b');
  expect(a1).toBe(a2);
  await tick();
  expect(t.rounds).toEqual([['a', 'b']]);
  const later = [t.r.request('c'), t.r.request('a')];
  await tick();
  await tick();
  // The first round still runs: the second has not started.
  expect(t.rounds).toHaveLength(1);
  t.finish([undefined, new Error('b failed')]);
  await expect(a1).resolves.toBeUndefined();
  await expect(b).rejects.toThrow('b failed');
  while (t.rounds.length < 2) await tick();
  expect(t.rounds[1]).toEqual(['c', 'a']);
  t.finish([undefined, undefined]);
  await Promise.all(later);
  expect(t.overlapped()).toBe(false);
  expect(t.r.stats).toEqual({ rounds: 2, members: 4 });
});

it('a round whose work rejects fails every member of it, and the rounds go on', async () => {
  const t = recording();
  const both = [t.r.request('a'), t.r.request('b')];
  await tick();
  t.finish(new Error('connection lost'));
  for (const p of both) await expect(p).rejects.toThrow('connection lost');
  const next = t.r.request('a');
  while (t.rounds.length < 2) await tick();
  t.finish([undefined]);
  await expect(next).resolves.toBeUndefined();
});
