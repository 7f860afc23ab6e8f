import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseLog } from '../log/parse.js';
import { forkPoints } from '../log/fork.js';
import { verifyLog } from '../log/verify.js';
import { planRepair } from '../log/repair.js';
import { resumableTurn } from '../log/resumable.js';
import { forkCommand } from './fork.js';
import { createPostgresSessionStore } from '../adapters/store/postgres.js';
import { describeWithPostgres } from '../test/helpers/postgres.js';
import { replayCommand } from './replay.js';
import { continueNote, resumeCommand } from './resume.js';
import { tempDir } from '../test/helpers/temp.js';

const GOLDEN = path.join(import.meta.dirname, '../test/golden');
const NAMES = ['approvals', 'compaction', 'crash-resume', 'ctrl-c', 'flaky-checkout', 'schedule'];
let dir: string;
let out = '';
let err = '';
const io = { out: { write: (s: string) => (out += s) }, err: { write: (s: string) => (err += s) } };
const clock = () => Date.UTC(2026, 11, 2);
beforeEach(() => {
  dir = fs.realpathSync(tempDir('bridle-fork-'));
  vi.stubEnv('BRIDLE_HOME', path.join(dir, 'home'));
  out = err = '';
});
afterEach(() => {
  vi.unstubAllEnvs();
  fs.rmSync(dir, { recursive: true, force: true });
});

const copyGolden = (name: string) => {
  const file = path.join(dir, `${name}.jsonl`);
  fs.copyFileSync(path.join(GOLDEN, `${name}.jsonl`), file);
  return file;
};
const lines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);
const logLine = () => /log: (.*)\n$/.exec(out)![1]!;

describe('bridle fork', () => {
  it('bridle fork copies the log up to the last completed turn byte for byte except the first line; replay accepts each fork', async () => {
    for (const name of NAMES) {
      const file = copyGolden(name);
      const original = lines(file);
      for (const p of forkPoints(parseLog(fs.readFileSync(file, 'utf8')).entries)) {
        out = err = '';
        expect(await forkCommand(file, { at: String(p.seq) }, io, { clock, id: `${name}-at-${p.seq}` })).toBe(0);
        const fork = logLine();
        expect(fork).toBe(path.join(dir, `${name}-at-${p.seq}.jsonl`));
        const copied = lines(fork);
        expect(copied.slice(1)).toEqual(original.slice(1, p.seq));
        expect(JSON.parse(copied[0]!)).toMatchObject({ kind: 'session/start', id: `${name}-at-${p.seq}`, forkOf: { session: JSON.parse(original[0]!).id, seq: p.seq } });
        let replayed = '';
        const code = await replayCommand(fork, { machines: true }, { write: (s: string) => (replayed += s) });
        expect({ name, seq: p.seq, code, tail: replayed.split('\n').slice(-4).join('\n') }).toMatchObject({ code: 0 });
        expect(replayed).toContain(`forked from: ${JSON.parse(original[0]!).id} at seq ${p.seq}`);
      }
      // The original is read, never written.
      expect(lines(file)).toEqual(original);
    }
  });

  it('a fork point inside a turn is refused naming the nearest valid points', async () => {
    const file = copyGolden('crash-resume');
    expect(await forkCommand(file, { at: '20' }, io, { clock, id: 'f' })).toBe(2);
    expect(err).toBe('bridle: FORK_INSIDE_TURN: the fork point seq 20 is inside turn t2 (it began at seq 17); fork at seq 14 (after t1) or seq 30 (after t2)\n');
    expect(out).toBe('');
    expect(fs.existsSync(path.join(dir, 'f.jsonl'))).toBe(false);
    await expect(forkCommand(file, { at: 'x' }, io, { clock, id: 'f' })).rejects.toThrow(/--at: a seq/);
    expect(await forkCommand(path.join(dir, 'nope.jsonl'), {}, io, { clock, id: 'f' })).toBe(2);
    expect(err).toMatch(/FORK_NO_SESSION/);
    // An id that exists is never appended to.
    expect(await forkCommand(file, {}, io, { clock, id: 'crash-resume' })).toBe(2);
    expect(err).toMatch(/FORK_EXISTS/);
  });

  it('--answer approve leaves the approval unanswered: the fork\'s turn stays open with the question for resume to ask again (ADR 0038); where it cannot go on, nothing is said approved', async () => {
    const file = copyGolden('approvals');
    expect(await forkCommand(file, { at: '18', answer: 'approve' }, io, { clock, id: 'yes' })).toBe(0);
    const fork = logLine();
    expect(err).toContain('up to seq 17 as yes; the approval at seq 18 is left unanswered: t1.s2.c1 is asked again when the fork goes on, not approved by the fork; nothing was re-run\n');
    expect(err).toContain(`go on: bridle resume ${fork} (asks for t1.s2.c1 again: answer it at the terminal under --approval ask; --approval never refuses it)`);
    const entries = parseLog(fs.readFileSync(fork, 'utf8')).entries;
    // No answer and no rule: the last entry is the original's question.
    expect(entries.at(-1)).toMatchObject({ seq: 17, kind: 'approval/asked', callId: 't1.s2.c1' });
    expect(entries.some((e) => e.kind === 'approval/decided' && e.callId === 't1.s2.c1')).toBe(false);
    expect(verifyLog(entries, { allowOpenTail: true }).ok).toBe(true);
    // Repair for resume leaves the turn open with the call pending, to be asked again; any other repair closes it, nothing run.
    expect(resumableTurn(entries)).toMatchObject({ turn: 't1', step: 't1.s2', pending: ['t1.s2.c1'], decided: [] });
    expect(planRepair(entries, { keepPending: true })).toMatchObject({ ok: true, drafts: [], report: { pending: ['t1.s2.c1'] } });
    const closed = planRepair(entries);
    expect(closed.ok && closed.report.notStarted).toEqual(['t1.s2.c1']);
    // Where the turn cannot go on, --continue tells the model the call never started, and nothing about it being approved.
    const note = continueNote({ turn: 't1', notStarted: ['t1.s2.c1'], outcomeUnknown: [], unlogged: [], compaction: false, subagents: [], linked: [] }, entries);
    expect(note).toContain('Never started (they did not run): t1.s2.c1.');
    expect(note).not.toContain('approved');
    // The other way round: seq 25 allowed `echo` always, and it ran; denied in a fork, it did not.
    out = err = '';
    expect(await forkCommand(file, { at: '25', answer: 'deny' }, io, { clock, id: 'no' })).toBe(0);
    const denied = parseLog(fs.readFileSync(logLine(), 'utf8')).entries;
    expect(denied.at(-1)).toMatchObject({ seq: 25, kind: 'approval/decided', callId: 't1.s3.c1', outcome: 'rejected', by: 'fork' });
    expect(continueNote({ turn: 't1', notStarted: ['t1.s3.c1'], outcomeUnknown: [], unlogged: [], compaction: false, subagents: [], linked: [] }, denied)).toMatch(/fork in which t1\.s3\.c1 \(bash .*\) was denied: it did not run\./);
  });

  it('--answer approve at a seq that is not an approval/decided is refused (exit 2, what the entry is), and no fork is written', async () => {
    const file = copyGolden('schedule');
    expect(await forkCommand(file, { at: '2', answer: 'approve' }, io, { clock, id: 'mistaken' })).toBe(2);
    expect(err).toBe('bridle: FORK_NOT_AN_ANSWER: seq 2 is a session/input ("total the cart into total.txt"), not an approval/decided: --answer approve re-answers an approval (this log has none); to replace an input with that word, write it otherwise (e.g. "approve.")\n');
    expect(out).toBe('');
    expect(fs.existsSync(path.join(dir, 'mistaken.jsonl'))).toBe(false);
  });

  it('--answer replaces one logged input; resume runs the new one', async () => {
    const file = copyGolden('schedule');
    expect(await forkCommand(file, { at: '2', answer: 'only read' }, io, { clock, id: 'other' })).toBe(0);
    expect(err).toMatch(/go on: bridle resume .*other\.jsonl \(runs the new input\)/);
    const fork = logLine();
    const entries = parseLog(fs.readFileSync(fork, 'utf8')).entries;
    expect(entries.map((e) => e.kind)).toEqual(['session/start', 'session/input']);
    expect(entries[1]).toMatchObject({ text: 'only read', mode: 'followup' });
    // resume runs it, as the turn the original ran on its own input.
    const script = path.join(dir, 'script.json');
    fs.writeFileSync(script, JSON.stringify({ responses: [{ match: 'only read', text: 'read only, as asked' }] }));
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(ws);
    let said = '';
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await resumeCommand(fork, undefined, { model: `scripted:${script}`, cwd: ws, moveWorkspace: true, approval: 'auto', sandbox: 'off' }, { write: (s: string) => (said += s) })).toBe(0);
    } finally {
      write.mockRestore();
    }
    expect(said).toMatch(/queued: 1 input/);
    const after = parseLog(fs.readFileSync(fork, 'utf8')).entries;
    expect(after.find((e) => e.kind === 'turn/start')).toMatchObject({ turn: 't1', input: 'only read', from: 2 });
    expect(after.find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'completed' });
    expect(verifyLog(after).violations).toEqual([]);
  });
});

describe('lineage', () => {
  it('lineage shown in replay: forked from, and forks of, found by scanning the directory', async () => {
    const file = copyGolden('compaction');
    expect(await forkCommand(file, { at: '21' }, io, { clock, id: 'b-fork' })).toBe(0);
    expect(await forkCommand(file, { at: '39' }, io, { clock, id: 'a-fork' })).toBe(0);
    const id = JSON.parse(lines(file)[0]!).id as string;
    let said = '';
    expect(await replayCommand(file, { html: path.join(dir, 'page.html') }, { write: (s: string) => (said += s) })).toBe(0);
    expect(said).toContain('forks of this session: b-fork (at seq 21), a-fork (at seq 39)\n');
    expect(said).not.toContain('forked from');
    const page = fs.readFileSync(path.join(dir, 'page.html'), 'utf8');
    expect(page).toContain('"lineage":{"forks":[{"id":"b-fork","seq":21},{"id":"a-fork","seq":39}]}');
    expect(page).toContain('id="lineage-panel"');
    said = '';
    expect(await replayCommand(path.join(dir, 'a-fork.jsonl'), { json: true }, { write: (s: string) => (said += s) })).toBe(0);
    expect(JSON.parse(said)).toMatchObject({ ok: true, lineage: { forkedFrom: { session: id, seq: 39 }, forks: [] } });
  });
});

describeWithPostgres('lineage on Postgres', (db) => {
  it('replay of a Postgres session prints its forks: the store\'s sessions whose header names it', async () => {
    const url = await db.fresh();
    const golden = lines(copyGolden('compaction'));
    const id = JSON.parse(golden[0]!).id as string;
    const store = createPostgresSessionStore({ url });
    const log = store.open(id);
    for (const l of golden) log.append(JSON.parse(l), l);
    await log.close();
    expect(await forkCommand(id, { at: '21', store: url }, io, { clock, id: 'b-fork' })).toBe(0);
    expect(await forkCommand(id, { at: '39', store: url }, io, { clock, id: 'a-fork' })).toBe(0);
    // A session of another lineage is no fork of this one.
    expect(await forkCommand('b-fork', { store: url }, io, { clock, id: 'grandchild' })).toBe(0);
    let said = '';
    expect(await replayCommand(id, { store: url }, { write: (s: string) => (said += s) })).toBe(0);
    expect(said).toContain('forks of this session: b-fork (at seq 21), a-fork (at seq 39)\n');
    said = '';
    expect(await replayCommand('b-fork', { store: url, json: true }, { write: (s: string) => (said += s) })).toBe(0);
    expect(JSON.parse(said)).toMatchObject({ ok: true, lineage: { forkedFrom: { session: id, seq: 21 }, forks: [{ id: 'grandchild' }] } });
    expect((await store.forks(id)).map((f) => f.location)).toEqual([expect.stringMatching(/#b-fork$/), expect.stringMatching(/#a-fork$/)]);
  });
});

describe('forks of the golden logs go on', () => {
  it('forkSession of a golden log at each turn boundary gives a session that continues with a new prompt, one model call per turn, no tool re-run', async () => {
    const { createMemorySessionStore } = await import('../adapters/store/memory.js');
    const { createScriptedProviderFromFunction } = await import('../adapters/model/scripted.js');
    const { createSession } = await import('../runtime/session.js');
    const { forkSession } = await import('../runtime/logs/fork.js');
    const { isSummaryInstruction } = await import('../log/context/summary-prompt.js');
    const { pendingInputs } = await import('../log/inputs.js');
    const { replayMachines } = await import('./replay-machines.js');
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(ws);
    for (const name of NAMES) {
      const text = fs.readFileSync(path.join(GOLDEN, `${name}.jsonl`), 'utf8');
      const entries = parseLog(text).entries;
      const sessions = createMemorySessionStore();
      const orig = sessions.open('orig');
      text.split('\n').slice(0, -1).forEach((l, i) => orig.append(entries[i]!, l));
      for (const p of forkPoints(entries)) {
        const id = `${name}-${p.seq}`;
        const forked = await forkSession({ store: sessions, session: 'orig', id, at: p.seq, clock });
        let calls = 0;
        const model = createScriptedProviderFromFunction((req) => (isSummaryInstruction(req.messages.at(-1)) ? { text: '## Request and intent\nx' } : (calls++, { text: 'what if: done' })));
        // Going on under the settings the log was written with (its window), as its replay will.
        const window = (entries[0] as { config?: { contextWindow?: number } }).config?.contextWindow;
        const s = createSession({ id, cwd: ws, moveWorkspace: true, bridleHome: path.join(dir, 'home'), existing: forked.entries, settings: { approval: 'auto', sandbox: 'off', ...(window ? { contextWindow: window } : {}) }, services: { model, store: sessions, clock: () => Date.UTC(2026, 11, 3) }, sleep: async () => {} }).start();
        const queued = pendingInputs(forked.entries).length;
        const out = await s.run('what if we started again?');
        await s.idle();
        await s.close();
        expect({ id, reason: out.reason }).toEqual({ id, reason: 'completed' });
        // Queued input the fork inherited runs first, then the prompt: one call each, and nothing from before again.
        expect({ id, calls }).toEqual({ id, calls: queued + 1 });
        const log = parseLog(sessions.get(id)!.text()).entries;
        expect(log.slice(forked.entries.length).filter((e) => e.kind === 'tool/dispatch')).toEqual([]);
        expect(verifyLog(log).violations).toEqual([]);
        expect({ id, v: await replayMachines(log) }).toEqual({ id, v: { identical: true } });
      }
    }
    expect(fs.readdirSync(ws)).toEqual([]);
  });
});
