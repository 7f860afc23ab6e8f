import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Entry } from '../log/entries.js';
import { LogBuilder, logText } from '../test/helpers/log-builder.js';
import { costCommand } from './cost.js';
import { replayCommand } from './replay.js';
import { tempDir } from '../test/helpers/temp.js';

let dir: string;
beforeEach(() => {
  dir = tempDir('bridle-replay-cost-');
  // The prices row comes from $BRIDLE_HOME's config: an empty home, so the shipped list prices.
  vi.stubEnv('BRIDLE_HOME', path.join(dir, 'home'));
});
afterEach(() => {
  vi.unstubAllEnvs();
  fs.rmSync(dir, { recursive: true, force: true });
});

const capture = async (f: (out: { write(s: string): unknown }) => Promise<number>) => {
  let out = '';
  const code = await f({ write: (s: string) => (out += s) });
  return { code, out };
};

/** A log's entries with another header and the usage a provider would have reported on each answer, in order. */
function priced(entries: Entry[], header: Partial<Entry>, usages: object[]): Entry[] {
  let i = 0;
  return entries.map((e) => (e.kind === 'session/start' ? ({ ...e, ...header } as Entry) : e.kind === 'assistant/message' ? ({ ...e, usage: usages[i++] } as Entry) : e));
}

/** A priced session (gpt-5) whose first step delegates to a subagent on another priced model, its log beside the parent's. */
function writeTree(): string {
  const child = 'p.t1.s1.c1';
  const parent = new LogBuilder()
    .startTurn('delegate it')
    .startStep()
    .answer('delegating', [{ name: 'delegate', args: { task: 'look' } }])
    .dispatch(1)
    .add({ kind: 'subagent/start', callId: 't1.s1.c1', child, depth: 1, mode: 'spawn' })
    .add({ kind: 'subagent/end', callId: 't1.s1.c1', child, reason: 'completed' })
    .result(1)
    .endStep('tool-calls')
    .startStep()
    .answer('done')
    .endStep('stop')
    .endTurn('completed');
  const parentEntries = priced(parent.entries, { id: 'p', model: 'gpt-5' } as Partial<Entry>, [
    { inputTokens: 1000, outputTokens: 100 },
    { inputTokens: 1500, outputTokens: 40, cachedTokens: 1000, reasoningTokens: 12 },
  ]);
  const childEntries = priced(new LogBuilder().cleanTurn('look').entries, { id: child, model: 'claude-sonnet-4-5', depth: 1, parent: 'p' } as Partial<Entry>, [
    { inputTokens: 2000, outputTokens: 50, cacheWriteTokens: 1800 },
    { inputTokens: 2100, outputTokens: 30, cachedTokens: 1800 },
  ]);
  fs.writeFileSync(path.join(dir, `${child}.jsonl`), logText(childEntries));
  const file = path.join(dir, 'p.jsonl');
  fs.writeFileSync(file, logText(parentEntries));
  return file;
}

describe('bridle replay --cost: what a run cost, from the same projection as bridle cost', () => {
  it('replay --cost --json of a subagent tree carries the report bridle cost --json prints for it', async () => {
    const file = writeTree();
    const replayed = await capture((out) => replayCommand(file, { cost: true, json: true }, out));
    const cost = await capture((out) => costCommand(file, { json: true }, out));
    expect(replayed.code).toBe(0);
    const report = JSON.parse(cost.out);
    expect(JSON.parse(replayed.out).cost).toEqual(report);
    // Per step, per turn, per session and the tree: the child's steps are in it.
    expect(report.sessions.map((s: { session: string }) => s.session)).toEqual(['p', 'p.t1.s1.c1']);
    expect(report.total.usd).toBeGreaterThan(0);
  });

  it('replay --cost prints each step and turn figures beside its entry, then the tree table bridle cost prints', async () => {
    const file = writeTree();
    const { out } = await capture((o) => replayCommand(file, { cost: true }, o));
    const table = await capture((o) => costCommand(file, {}, o));
    const lines = out.split('\n');
    // gpt-5 at $1.25 / $10 per million: 1000 in, 100 out.
    expect(lines.find((l) => /t1\.s1\s+assistant\/message/.test(l))).toMatch(/\[step: in 1000 · out 100 · \$0\.002250\]$/);
    expect(lines.find((l) => /t1\.s2\s+assistant\/message/.test(l))).toMatch(/\[step: in 1500 \(cached 1000\) · out 40 \(reasoning 12\) · \$/);
    expect(lines.find((l) => /turn\/end/.test(l))).toMatch(/\[turn: in 2500 \(cached 1000\) · out 140 \(reasoning 12\) · \$/);
    // The whole tree, as `bridle cost` prints it, word for word.
    expect(out).toContain(`cost:\n${table.out}`);
    expect(table.out).toMatch(/^tree /m);
  });

  it('a golden log of a scripted model: every step labelled scripted, $0, and the report equals bridle cost --json', async () => {
    const file = path.join(dir, 'flaky.jsonl');
    fs.copyFileSync(new URL('../test/golden/flaky-checkout.jsonl', import.meta.url), file);
    const text = await capture((o) => replayCommand(file, { cost: true }, o));
    const answers = text.out.split('\n').filter((l) => /assistant\/message/.test(l));
    expect(answers.length).toBeGreaterThan(0);
    for (const l of answers) expect(l).toMatch(/\[step: in \d+ · out \d+ · scripted, \$0\]$/);
    const json = await capture((o) => replayCommand(file, { cost: true, json: true }, o));
    const cost = await capture((o) => costCommand(file, { json: true }, o));
    expect(JSON.parse(json.out).cost).toEqual(JSON.parse(cost.out));
    expect(JSON.parse(cost.out).total.usd).toBe(0);
  });

  it('without --cost the timeline is as before: no figures, no report', async () => {
    const file = writeTree();
    const { out } = await capture((o) => replayCommand(file, {}, o));
    expect(out).not.toMatch(/\[step:|^cost:/m);
    const json = await capture((o) => replayCommand(file, { json: true }, o));
    expect(JSON.parse(json.out).cost).toBeUndefined();
  });
});
