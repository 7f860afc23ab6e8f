import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { LogBuilder, logText } from '../../test/helpers/log-builder.js';
import { spawnSync } from 'node:child_process';
import { acquireJsonlLock, lockPathOf, lockSocketOf } from './jsonl-lock.js';
import { repairSession } from '../../runtime/logs/repair.js';
import { jsonlStore } from './jsonl.js';
import { tempDir } from '../../test/helpers/temp.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = tempDir('bridle-repair-');
  file = path.join(dir, 's.jsonl');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const clock = () => Date.UTC(2026, 5, 1);
const read = () => fs.readFileSync(file, 'utf8');

const noServices = { get: () => { throw new Error('no services here'); }, has: () => false, onDispose: () => undefined };

/** A JSONL log repaired as every host repairs it: the store's claim, then the one procedure for every store. */
async function repairJsonl(at: string, c: () => number) {
  const store = jsonlStore.create({ dir: path.dirname(at) }, noServices as never);
  const id = path.basename(at, '.jsonl');
  const lock = await store.claim(id);
  try {
    return (await repairSession(store, id, lock, c))!;
  } finally {
    lock.release();
  }
}

describe('repairing a JSONL log (repairSession over the JSONL store)', () => {
  it('leaves a clean log byte for byte as it was', async () => {
    const text = logText(new LogBuilder().cleanTurn().entries);
    fs.writeFileSync(file, text);
    const r = await repairJsonl(file, clock);
    expect(r).toMatchObject({ ok: true, appended: [] });
    expect(read()).toBe(text);
  });

  it('cuts a torn last line back to the last newline, keeps every good line, and reports it', async () => {
    const entries = new LogBuilder().cleanTurn().entries;
    const good = logText(entries);
    const n = entries.length + 1;
    fs.writeFileSync(file, `${good}{"seq":${n},"at":"2026-01-01T00:00:00.0`);
    const r = await repairJsonl(file, clock);
    if (!r.ok) throw new Error('refused');
    expect(r.report.torn).toMatchObject({ line: n });
    const after = read();
    expect(after.startsWith(good)).toBe(true);
    const parsed = parseLog(after);
    expect(parsed.torn).toBeUndefined();
    expect(parsed.entries.at(-1)).toMatchObject({ seq: n, kind: 'repair', found: 'torn-tail' });
    expect(verifyLog(parsed.entries).violations).toEqual([]);
  });

  it('closes an open turn after a torn line, appending only', async () => {
    const b = new LogBuilder().cleanTurn().startTurn().startStep().answer('', [{ name: 'bash' }]).dispatch(1);
    const good = logText(b.entries);
    fs.writeFileSync(file, `${good}{"seq":${b.recorder.lastSeq + 1},"kind":"tool/res`);
    const r = await repairJsonl(file, clock);
    if (!r.ok) throw new Error('refused');
    const after = read();
    expect(after.startsWith(good)).toBe(true);
    const entries = parseLog(after).entries;
    expect(entries.slice(b.recorder.lastSeq).map((e) => e.kind)).toEqual(['repair', 'repair', 'tool/result', 'step/end', 'turn/end']);
    expect(verifyLog(entries).violations).toEqual([]);
    // A second repair finds nothing to do.
    expect(await repairJsonl(file, clock)).toMatchObject({ ok: true, appended: [] });
    expect(read()).toBe(after);
  });

  it('a whole last line that only lacks its newline is kept and ended', async () => {
    const text = logText(new LogBuilder().cleanTurn().entries);
    fs.writeFileSync(file, text.slice(0, -1));
    const r = await repairJsonl(file, clock);
    expect(r.ok).toBe(true);
    expect(read()).toBe(text);
  });

  it('refuses a log corrupt before its end and leaves the file untouched', async () => {
    const lines = logText(new LogBuilder().cleanTurn().startTurn().entries).split('\n');
    lines[4] = '{"seq":5,"kind":"tool/ca';
    const text = lines.join('\n');
    fs.writeFileSync(file, text);
    const r = await repairJsonl(file, clock);
    expect(r).toMatchObject({ ok: false, violations: [{ violation: 'bad-json', line: 5 }] });
    expect(read()).toBe(text);
    // A structural defect before the open end is refused as well.
    const e = new LogBuilder().cleanTurn().startTurn().startStep().entries;
    e.splice(3, 1);
    fs.writeFileSync(file, logText(e));
    const refused = await repairJsonl(file, clock);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.violations[0]).toMatchObject({ violation: 'seq-gap', seq: 5 });
  });
});

describe('repairing a delegating JSONL session: the children an open subagent/start names are repaired too', () => {
  /** A log killed inside a delegate call: its subagent/start names `child`, no subagent/end follows. */
  const delegating = (child: string) =>
    new LogBuilder()
      .cleanTurn()
      .startTurn('delegate it')
      .startStep()
      .answer('', [{ name: 'delegate', args: { task: 'look' } }])
      .dispatch(1)
      .add({ kind: 'subagent/start', callId: 't2.s1.c1', child, depth: 1, mode: 'spawn' });
  const killedMidCall = () => new LogBuilder().startTurn('look').startStep().answer('', [{ name: 'list_dir' }]).dispatch(1, true);
  const write = (name: string, b: LogBuilder) => fs.writeFileSync(path.join(dir, `${name}.jsonl`), logText(b.entries));
  const verifies = (name: string) => verifyLog(parseLog(fs.readFileSync(path.join(dir, `${name}.jsonl`), 'utf8')).entries).violations;

  it('a child and a grandchild left open by the kill are closed with their parent, and every log of the tree verifies', async () => {
    write('p', delegating('p.t2.s1.c1'));
    write('p.t2.s1.c1', delegating('p.t2.s1.c1.t2.s1.c1'));
    write('p.t2.s1.c1.t2.s1.c1', killedMidCall());
    const r = await repairJsonl(path.join(dir, 'p.jsonl'), clock);
    if (!r.ok) throw new Error('refused');
    expect(r.report.subagents).toEqual(['p.t2.s1.c1']);
    const [child] = r.children;
    expect(child).toMatchObject({ child: 'p.t2.s1.c1', outcome: { kind: 'repaired' } });
    if (child?.outcome.kind !== 'repaired') return;
    expect(child.outcome.repair.children).toMatchObject([{ child: 'p.t2.s1.c1.t2.s1.c1', outcome: { kind: 'repaired', repair: { report: { turn: 't1', outcomeUnknown: [{ name: 'list_dir' }] } } } }]);
    for (const log of ['p', 'p.t2.s1.c1', 'p.t2.s1.c1.t2.s1.c1']) expect(verifies(log), log).toEqual([]);
    // Nothing is left to do on a second pass, anywhere in the tree.
    const again = await repairJsonl(path.join(dir, 'p.jsonl'), clock);
    expect(again).toMatchObject({ ok: true, appended: [], children: [] });
  });

  it("the stale locks of the children's dead writers are removed with their repair; a live child's lock is left, and that child with it", async () => {
    write('p', delegating('p.t2.s1.c1'));
    write('p.t2.s1.c1', delegating('p.t2.s1.c1.t2.s1.c1'));
    write('p.t2.s1.c1.t2.s1.c1', killedMidCall());
    const child = path.join(dir, 'p.t2.s1.c1.jsonl');
    const grandchild = path.join(dir, 'p.t2.s1.c1.t2.s1.c1.jsonl');
    // The child's writer was killed holding its lock: its claim, and a socket nobody listens on.
    fs.writeFileSync(lockPathOf(child), `${JSON.stringify({ pid: 1, host: os.hostname(), since: '2026-01-01T00:00:00.000Z' })}\n`);
    spawnSync(process.execPath, ['-e', `process.chdir(${JSON.stringify(dir)}); require('net').createServer().listen('p.t2.s1.c1.jsonl.lock.sock', () => process.kill(process.pid, 'SIGKILL'))`]);
    expect(fs.existsSync(lockSocketOf(child))).toBe(true);
    // The grandchild's, an older bridle's claim whose pid is gone.
    fs.writeFileSync(lockPathOf(grandchild), `${JSON.stringify({ pid: 2 ** 22 + 99, host: os.hostname(), since: '2026-01-01T00:00:00.000Z' })}\n`);
    const r = await repairJsonl(path.join(dir, 'p.jsonl'), clock);
    expect(r).toMatchObject({ ok: true, children: [{ outcome: { kind: 'repaired', repair: { children: [{ outcome: { kind: 'repaired' } }] } } }] });
    expect(fs.readdirSync(dir).sort()).toEqual(['p.jsonl', 'p.t2.s1.c1.jsonl', 'p.t2.s1.c1.t2.s1.c1.jsonl']);

    // A child someone is writing (its lock's socket listens) is not repaired under them, and its lock stays.
    write('q', delegating('q.c'));
    write('q.c', killedMidCall());
    const live = acquireJsonlLock(path.join(dir, 'q.c.jsonl'));
    try {
      const before = fs.readFileSync(path.join(dir, 'q.c.jsonl'), 'utf8');
      const q = await repairJsonl(path.join(dir, 'q.jsonl'), clock);
      expect(q).toMatchObject({ ok: true, children: [{ child: 'q.c', outcome: { kind: 'refused', violations: [{ violation: 'SESSION_LOCKED' }] } }] });
      expect(fs.readFileSync(path.join(dir, 'q.c.jsonl'), 'utf8')).toBe(before);
      expect(fs.existsSync(lockPathOf(path.join(dir, 'q.c.jsonl')))).toBe(true);
    } finally {
      live.release();
    }
  });

  it('a child log that is missing, corrupt, or named with a path that climbs out is reported, and the parent is still repaired', async () => {
    for (const [child, make, outcome] of [
      ['p.gone', () => {}, { kind: 'missing' }],
      ['p.bad', () => fs.writeFileSync(path.join(dir, 'p.bad.jsonl'), '{oops\n'), { kind: 'refused', violations: [{ violation: 'bad-json', line: 1 }] }],
      ['../outside', () => {}, { kind: 'refused', violations: [{ violation: 'bad-child' }] }],
    ] as const) {
      write('p', delegating(child));
      make();
      const r = await repairJsonl(path.join(dir, 'p.jsonl'), clock);
      expect(r, child).toMatchObject({ ok: true, children: [{ child, outcome }] });
      expect(verifies('p'), child).toEqual([]);
    }
    expect(fs.existsSync(path.join(dir, '..', 'outside.jsonl'))).toBe(false);
  });

  it('a log that names itself as its child is not repaired twice over', async () => {
    write('p', delegating('p'));
    const r = await repairJsonl(path.join(dir, 'p.jsonl'), clock);
    expect(r).toMatchObject({ ok: true, children: [{ child: 'p', outcome: { kind: 'refused', violations: [{ violation: 'bad-child' }] } }] });
    expect(verifies('p')).toEqual([]);
  });
});
