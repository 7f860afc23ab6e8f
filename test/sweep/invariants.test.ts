/** The sweep's checks catch what they claim to: a real world's log, then the same log broken on purpose. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { checkWorld } from './invariants.js';
import { planReply } from './model.js';
import { runWorld, type WorldRun } from './run-world.js';

let run: WorldRun;
const withEntries = (es: Entry[]): WorldRun => ({ ...run, h: { ...run.h, entries: () => es } });
const problems = (es: Entry[]) => checkWorld(withEntries(es)).join('\n');

beforeAll(async () => {
  // The first seed whose first answer calls tools, an invalid one among them.
  let seed = 1;
  for (;; seed++) {
    const p = planReply(seed, 0);
    if (p.kind === 'answer' && p.response.toolCalls?.some((c) => c.name === 'nope' || c.name === 'rm_rf' || c.name === 'Peek')) break;
  }
  run = await runWorld(seed);
});
afterAll(async () => {
  await run.h.session.close();
  run.h.cleanup();
});

describe('the sweep invariants', () => {
  it('pass on a real world', () => {
    expect(checkWorld(run)).toEqual([]);
  });

  it('catch a lost tool/result (I2)', () => {
    const es = run.h.entries().filter((e) => e.kind !== 'tool/result');
    expect(problems(es)).toMatch(/I2: t1\.s1\.c\d has 0 results/);
  });

  it('catch a dispatched invalid call (I4)', () => {
    const es = [...run.h.entries()];
    const bad = es.find((e): e is Extract<Entry, { kind: 'tool/result' }> => e.kind === 'tool/result' && e.code === 'UNKNOWN_TOOL')!;
    const at = es.indexOf(bad);
    es.splice(at, 0, { seq: bad.seq, at: bad.at, kind: 'tool/dispatch', turn: bad.turn, step: bad.step, callId: bad.callId, name: bad.name, idempotent: false });
    expect(problems(es)).toMatch(/I4: invalid .* was dispatched/);
  });

  it('catch a seq gap and a second turn/start', () => {
    const es = run.h.entries().map((e, i) => (i === 3 ? { ...e, seq: 99 } : e));
    expect(problems(es)).toMatch(/seq: entry 4 has seq 99/);
    const twice = [...run.h.entries()];
    const start = twice.findIndex((e) => e.kind === 'turn/start');
    twice.splice(start + 1, 0, { ...twice[start]! });
    expect(problems(twice)).toMatch(/I3: t1 starts while t1 is open/);
  });
});
