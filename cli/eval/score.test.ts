import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { LogBuilder } from '../../test/helpers/log-builder.js';
import { formatTable, parseRunSessionId, passesCell, runSessionId, scoreEntries, summarize, type RunRecord } from './score.js';

const golden = (f: string): Entry[] => parseLog(readFileSync(new URL(`../../test/golden/${f}`, import.meta.url), 'utf8')).entries;

function record(task: string, run: number, o: Partial<RunRecord> = {}): RunRecord {
  return { task, run, log: `/l/${task}.${run}`, session: `e.${task}.${run}`, model: 'scripted:/s.json', scripted: true, cwd: '/ws', outcome: 'completed', steps: 4, tokens: null, ms: 1000, check: { exitCode: 0, passed: true, ms: 5, output: '' }, ...o };
}

describe('scoreEntries: the figures a log proves', () => {
  it('reads steps, outcome, time and the model from a recorded run, and no tokens where none were reported', () => {
    const es = golden('schedule.jsonl');
    const s = scoreEntries(es);
    const turnEnd = es.find((e) => e.kind === 'turn/end')!;
    const turnStart = es.find((e) => e.kind === 'turn/start')!;
    expect(s).toMatchObject({ outcome: 'completed', steps: turnEnd.kind === 'turn/end' ? turnEnd.steps : -1, tokens: null, scripted: true, prompt: 'total the cart into total.txt' });
    expect(s.ms).toBe(Date.parse(turnEnd.at) - Date.parse(turnStart.at));
    expect(s.model.startsWith('scripted:')).toBe(true);
  });

  it('sums the steps of every turn, and the last turn’s end is the outcome', () => {
    const es = golden('crash-resume.jsonl');
    const ends = es.filter((e) => e.kind === 'turn/end');
    expect(scoreEntries(es)).toMatchObject({ outcome: 'completed', steps: ends.reduce((n, e) => n + (e.kind === 'turn/end' ? e.steps : 0), 0) });
    expect(scoreEntries(golden('ctrl-c.jsonl'))).toMatchObject({ outcome: 'aborted' });
  });

  it('sums the usage the model reported; counts the steps of a turn that never ended', () => {
    const b = new LogBuilder().startTurn('p').startStep();
    b.add({ kind: 'assistant/message', turn: 't1', step: 't1.s1', blocks: [{ type: 'text', text: 'a' }], finish: { kind: 'ok', reason: 'stop' }, usage: { inputTokens: 100, outputTokens: 7 }, surfaceOp: 'append' });
    b.endStep().startStep();
    b.add({ kind: 'assistant/message', turn: 't1', step: 't1.s2', blocks: [{ type: 'text', text: 'b' }], finish: { kind: 'ok', reason: 'stop' }, usage: { inputTokens: 150, outputTokens: 3 }, surfaceOp: 'append' });
    expect(scoreEntries(b.entries)).toMatchObject({ outcome: 'open', steps: 2, tokens: { input: 250, output: 10 }, ms: null, scripted: false, model: 'm' });
    expect(scoreEntries([])).toMatchObject({ outcome: 'none', steps: 0, session: 'unknown' });
  });
});

describe('run session ids name their task', () => {
  it('round-trips, and an ordinary session id names none', () => {
    expect(parseRunSessionId(runSessionId('20261201-110140-714a26', 'cart-remove', 3))).toEqual({ eval: '20261201-110140-714a26', task: 'cart-remove', run: 3 });
    expect(parseRunSessionId('20261201-110140-714a26')).toBeUndefined();
  });
});

describe('the table', () => {
  it('one row per task: passes over runs, medians of steps and time; a scripted model is labelled scripted', () => {
    const rows = summarize([record('a', 1, { steps: 3, ms: 1000 }), record('a', 2, { steps: 5, ms: 3000, check: { exitCode: 1, passed: false, ms: 5, output: 'no' } }), record('b', 1, { model: 'gpt-x', scripted: false, tokens: { input: 90, output: 10 } })]);
    expect(rows).toEqual([
      { task: 'a', model: 'scripted', scripted: true, runs: 2, checked: 2, passes: 1, steps: 4, tokens: null, ms: 2000 },
      { task: 'b', model: 'gpt-x', scripted: false, runs: 1, checked: 1, passes: 1, steps: 4, tokens: 100, ms: 1000 },
    ]);
    expect(formatTable(rows).split('\n')).toEqual([
      'task  model     passes  steps  tokens   time',
      'a     scripted     1/2      4       —  2.0 s',
      'b     gpt-x        1/1      4     100  1.0 s',
    ]);
  });

  it('runs whose check did not run are neither passes nor failures', () => {
    const [s] = summarize([record('a', 1, { check: null }), record('a', 2)]);
    expect(passesCell(s!)).toBe('1/1 (1 not checked)');
    expect(passesCell(summarize([record('a', 1, { check: null })])[0]!)).toBe('not checked (1)');
  });
});
