/**
 * Chapter 12's exhibit: a file at 100% line coverage that still has an
 * ordering bug, caught only by the transcript test.
 *
 * `exhibit/schedule-calls.ordering-bug.ts` is `machines/schedule-calls.ts`
 * less one line: a running read no longer holds back a later write. Here it
 * takes the real scheduler's place in the machines (`vi.mock`, this file
 * only). Its own unit tests pass and v8 coverage, through vitest, counts
 * every line of it; replaying the recorded `schedule.jsonl` (two reads, a
 * write and a read in one answer, recorded by `record.mjs schedule`) through
 * the machines does not give the recorded bytes back.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { replayThroughMachines } from '../../replay/replay.js';
import { builtinTools } from '../../tools/index.js';

vi.mock('../../machines/schedule-calls.js', async () => await import('./exhibit/schedule-calls.ordering-bug.js'));

const dir = fileURLToPath(new URL('.', import.meta.url));
const repo = fileURLToPath(new URL('../..', import.meta.url));
const exhibit = 'test/golden/exhibit/schedule-calls.ordering-bug.ts';
const unitTests = 'test/golden/exhibit/schedule-calls.ordering-bug.test.ts';
const readOnly = new Set(builtinTools().filter((t) => t.readOnly).map((t) => t.name));
const entriesOf = (f: string): Entry[] => parseLog(readFileSync(join(dir, f), 'utf8')).entries;

/** Whether one answer of the log asked for a read and then a write: the only shape the bug can show in. */
function hasReadBeforeWrite(es: readonly Entry[]): boolean {
  const calls = new Map<string, string[]>();
  for (const e of es) if (e.kind === 'tool/call') calls.set(e.step, [...(calls.get(e.step) ?? []), e.name]);
  return [...calls.values()].some((names) => names.some((n, i) => readOnly.has(n) && names.slice(i + 1).some((m) => !readOnly.has(m))));
}

const work = mkdtempSync(join(tmpdir(), 'bridle-exhibit-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('chapter 12: 100% line coverage, and an ordering bug all the same', () => {
  it('the exhibit’s unit tests pass, and v8 coverage (through vitest) counts every line of it', { timeout: 60_000 }, () => {
    const vitest = join(repo, 'node_modules/vitest/vitest.mjs');
    // A vitest of its own, with its own reporter: the outer run's JSON report stays the outer run's.
    const r = spawnSync(
      process.execPath,
      [vitest, 'run', unitTests, '--reporter=dot', '--coverage.enabled', '--coverage.provider=v8', `--coverage.include=${exhibit}`, '--coverage.reporter=json-summary', `--coverage.reportsDirectory=${work}`],
      { cwd: repo, env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1' }, encoding: 'utf8', timeout: 50_000 },
    );
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Tests\s+7 passed \(7\)/);
    const summary = JSON.parse(readFileSync(join(work, 'coverage-summary.json'), 'utf8')) as Record<string, { lines: { pct: number; total: number } }>;
    const file = summary[join(repo, exhibit)];
    expect(file?.lines.total).toBeGreaterThan(0);
    expect(file?.lines.pct).toBe(100);
  });

  it('the transcript test catches it: schedule.jsonl replays differently, the write dispatched while a read still runs', async () => {
    const recorded = entriesOf('schedule.jsonl');
    const r = await replayThroughMachines(recorded, builtinTools());
    expect(r.identical).toBe(false);
    const at = r.firstDifference! - 1;
    const replayed = JSON.parse(r.text.split('\n')[at]!) as Entry;
    const want = recorded[at]!;
    // Where the recording has a read's result, the buggy scheduler has already dispatched the write.
    expect(want.kind === 'tool/result' && readOnly.has(want.name)).toBe(true);
    expect(replayed.kind === 'tool/dispatch' && !readOnly.has(replayed.name)).toBe(true);
    const callOf = (e: Entry) => (e.kind === 'tool/call' ? e.callId : undefined);
    const write = recorded.find((e) => e.kind === 'tool/call' && !readOnly.has(e.name));
    expect(replayed.kind === 'tool/dispatch' && replayed.callId).toBe(callOf(write!));
  });

  it('the golden logs with no read before a write in one answer replay byte for byte all the same: they cannot see it', async () => {
    const logs = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
    const verdicts = await Promise.all(
      logs.map(async (f) => {
        const es = entriesOf(f);
        return { f, shaped: hasReadBeforeWrite(es), identical: (await replayThroughMachines(es, builtinTools())).identical };
      }),
    );
    expect(verdicts.filter((v) => v.shaped).map((v) => v.f)).toContain('schedule.jsonl');
    for (const v of verdicts) expect({ f: v.f, identical: v.identical }).toEqual({ f: v.f, identical: !v.shaped });
  });
});
