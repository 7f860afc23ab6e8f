/**
 * Chapter 12's exhibit: a file at 100% line coverage that still has an
 * ordering bug, caught only by the transcript test.
 *
 * `exhibit/schedule-calls.ordering-bug.ts` is `machines/schedule-calls.ts`
 * less one line: a running read no longer holds back a later write. Here it
 * can take the real scheduler's place in the machines (`vi.mock`, this file
 * only; `scheduler.buggy` says which one runs). Its own unit tests pass and v8
 * coverage, through vitest, counts every line of it; replaying a recorded
 * log in which the write was allowed while both reads still ran (recorded
 * here with the real scheduler: two reads, a write and a read in one answer,
 * the reads' bodies held open until the write's approval is answered)
 * through the machines does not give the recorded bytes back.
 *
 * The log must show the write made ready while a read runs: a read-only,
 * idempotent call flushes nothing of its own (ADR 0072), so in a log where
 * the write's first entry comes after the reads' results (`schedule.jsonl`)
 * replay makes it ready only once they are done, and neither scheduler can
 * tell the two apart.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { checkCheckpoints } from '../../machines/session-fold.js';
import type { ApprovalAnswer } from '../../ports/approval.js';
import type { ToolDefinition } from '../../ports/tools.js';
import { replayThroughMachines } from '../../replay/replay.js';
import { builtinTools } from '../../tools/index.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp.js';

const scheduler = vi.hoisted(() => ({ buggy: true }));
vi.mock('../../machines/schedule-calls.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../machines/schedule-calls.js')>();
  const exhibit = await import('./exhibit/schedule-calls.ordering-bug.js');
  return { ...real, releasable: (slots: Parameters<typeof real.releasable>[0]) => (scheduler.buggy ? exhibit.releasable(slots) : real.releasable(slots)) };
});

const dir = fileURLToPath(new URL('.', import.meta.url));
const repo = fileURLToPath(new URL('../..', import.meta.url));
const exhibit = 'test/golden/exhibit/schedule-calls.ordering-bug.ts';
const unitTests = 'test/golden/exhibit/schedule-calls.ordering-bug.test.ts';
const readOnly = new Set(builtinTools().filter((t) => t.readOnly).map((t) => t.name));
const entriesOf = (f: string): Entry[] => parseLog(readFileSync(join(dir, f), 'utf8')).entries;
const tick = () => new Promise<void>((r) => setImmediate(r));

/** Whether one answer of the log asked for a read and then a write. */
function hasReadBeforeWrite(es: readonly Entry[]): boolean {
  const calls = new Map<string, string[]>();
  for (const e of es) if (e.kind === 'tool/call') calls.set(e.step, [...(calls.get(e.step) ?? []), e.name]);
  return [...calls.values()].some((names) => names.some((n, i) => readOnly.has(n) && names.slice(i + 1).some((m) => !readOnly.has(m))));
}

/**
 * Whether the log shows a write allowed while an earlier read of its answer still ran (dispatched, no result yet):
 * the only shape the bug can show in on replay, which makes a call ready where the log says it was.
 */
function hasWriteReadyDuringRead(es: readonly Entry[]): boolean {
  const running = new Set<string>();
  const order = new Map<string, number>();
  es.forEach((e, i) => e.kind === 'tool/call' && order.set(e.callId, i));
  for (const e of es) {
    if (e.kind === 'tool/dispatch' && readOnly.has(e.name)) running.add(e.callId);
    if (e.kind === 'tool/result') running.delete(e.callId);
    if (e.kind === 'approval/decided' && /^allowed-/.test(e.outcome) && [...running].some((r) => r.startsWith(`${e.step}.`) && order.get(r)! < order.get(e.callId)!)) return true;
  }
  return false;
}

let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
  scheduler.buggy = true;
});

/** Waits for what real file reads and the machines bring, a millisecond at a time (10 s at most: the machine may be loaded). */
async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !check(); i++) await new Promise<void>((r) => setTimeout(r, 1));
  if (!check()) throw new Error(`never came: ${what}`);
}

/**
 * `schedule.jsonl`'s answer, run with the real scheduler under `ask`: both reads are held open (their bodies wait for
 * the test) until the write's approval is answered, then let go in order. The log shows the write allowed while both
 * reads ran, and held back until both results.
 */
async function recordHeldReads(): Promise<Entry[]> {
  scheduler.buggy = false;
  const held = new Map<string, () => void>();
  const tools = builtinTools().map((t): ToolDefinition => {
    if (t.name !== 'read_file') return t;
    const read = t as ToolDefinition<{ path: string }>;
    return { ...read, execute: async (args, ctx) => (args.path === 'total.txt' ? undefined : await new Promise<void>((r) => held.set(args.path, r)), read.execute(args, ctx)) };
  });
  let answer: ((a: ApprovalAnswer) => void) | undefined;
  h = createHarness(
    (_r, i) =>
      i === 0
        ? {
            text: 'Reading the prices and the cart together, then writing the total and reading it back.',
            toolCalls: [
              { name: 'read_file', arguments: { path: 'prices.txt' } },
              { name: 'read_file', arguments: { path: 'cart.txt' } },
              { name: 'write_file', arguments: { path: 'total.txt', content: 'total 1259\n' } },
              { name: 'read_file', arguments: { path: 'total.txt' } },
            ],
          }
        : { text: 'The total is 1259 cents, written to total.txt.' },
    { tools, approval: 'ask', answerer: () => new Promise((r) => (answer = r)) },
  );
  writeFileSync(join(h.workspace, 'prices.txt'), 'apple 120\nbread 350\ncoffee 899\n');
  writeFileSync(join(h.workspace, 'cart.txt'), 'apple 3\ncoffee 1\n');
  const turn = h.session.run('total the cart into total.txt');
  const has = (kind: string, name?: string) => h!.entries().some((e) => e.kind === kind && (name === undefined || ('name' in e && e.name === name)));
  await until('both reads running and the write asked', () => held.size === 2 && answer !== undefined);
  answer!({ outcome: 'allowed-once', by: 'test' });
  await until('the write allowed', () => has('approval/decided'));
  for (let i = 0; i < 20; i++) await tick();
  // The real scheduler holds the allowed write back while the reads run.
  expect(has('tool/dispatch', 'write_file')).toBe(false);
  held.get('prices.txt')!();
  await until('the first read done', () => h!.entries().filter((e) => e.kind === 'tool/result').length === 1);
  held.get('cart.txt')!();
  await turn;
  return [...h.entries()];
}

const work = tempDir('bridle-exhibit-');
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

  it('the transcript test catches it: a log whose write was allowed while the reads ran replays differently, the write dispatched while a read still runs', async () => {
    const recorded = await recordHeldReads();
    expect(verifyLog(recorded, { checkpoints: checkCheckpoints }).violations).toEqual([]);
    expect(hasWriteReadyDuringRead(recorded)).toBe(true);
    // The real scheduler gives the recorded bytes back.
    expect((await replayThroughMachines(recorded, builtinTools())).identical).toBe(true);
    scheduler.buggy = true;
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

  it('the golden logs replay byte for byte all the same: none shows a write allowed while a read ran, so they cannot see it', async () => {
    const logs = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
    const verdicts = await Promise.all(logs.map(async (f) => ({ f, identical: (await replayThroughMachines(entriesOf(f), builtinTools())).identical })));
    for (const f of logs) expect({ f, shaped: hasWriteReadyDuringRead(entriesOf(f)) }).toEqual({ f, shaped: false });
    // schedule.jsonl has reads before a write in one answer, but the write's first entry comes after their results.
    expect(hasReadBeforeWrite(entriesOf('schedule.jsonl'))).toBe(true);
    for (const v of verdicts) expect(v).toEqual({ f: v.f, identical: true });
  });
});
