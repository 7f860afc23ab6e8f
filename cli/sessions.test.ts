/**
 * `bridle sessions`: one line per session of a store, with its owner (the
 * live writer, if any) and its state from the log's last markers — for the
 * JSONL store (lock files) and the Postgres store (leases), alike.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { createPostgresSessionStore } from '../adapters/store/postgres.js';
import { Recorder } from '../log/recorder.js';
import { LogBuilder, logText } from '../test/helpers/log-builder.js';
import { describeWithPostgres } from '../test/helpers/postgres.js';
import { listStore, sessionsCommand, stateOf } from './sessions.js';
import { acquireJsonlLock } from '../adapters/store/jsonl-lock.js';
import { spawnSync } from 'node:child_process';
import { replayCommand } from './replay.js';
import { forkCommand } from './fork.js';
import { mkdirSync } from 'node:fs';
import { tempDir } from '../test/helpers/temp.js';

const named = (id: string, b: LogBuilder) => b.entries.map((e) => (e.kind === 'session/start' ? { ...e, id } : e));

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

it('the state of a session comes from its last marker and whether a writer holds it', () => {
  expect(stateOf(undefined, false)).toBe('idle');
  expect(stateOf('turn/end', true)).toBe('idle');
  expect(stateOf('turn/start', true)).toBe('running');
  expect(stateOf('turn/start', false)).toBe('interrupted');
  expect(stateOf('session/end', false)).toBe('ended');
  expect(stateOf('session/reopen', false)).toBe('idle');
});

it('bridle sessions lists a JSONL store one line per session, with owner and state (idle, running, interrupted, ended)', async () => {
  dir = tempDir('bridle-sessions-');
  const write = (id: string, b: LogBuilder) => writeFileSync(join(dir!, `${id}.jsonl`), logText(named(id, b)));
  write('a-idle', new LogBuilder().cleanTurn());
  write('b-running', new LogBuilder().cleanTurn().startTurn('more'));
  writeFileSync(join(dir, 'b-running.jsonl.lock'), JSON.stringify({ pid: process.pid, host: hostname(), since: '2026-01-01T00:00:00.000Z' }));
  write('c-interrupted', new LogBuilder().startTurn().startStep());
  // A lock whose pid is gone holds nothing.
  writeFileSync(join(dir, 'c-interrupted.jsonl.lock'), JSON.stringify({ pid: 2 ** 22 + 7, host: hostname(), since: '2026-01-01T00:00:00.000Z' }));
  write('d-ended', new LogBuilder().cleanTurn().add({ kind: 'session/end', by: 'server' }));
  write('e-reopened', new LogBuilder().cleanTurn().add({ kind: 'session/end', by: 'server' }).add({ kind: 'session/reopen' }));
  writeFileSync(join(dir, 'not-a-log.jsonl'), 'hello\n');
  const list = (await listStore(dir)).sessions;
  expect(list.map((s) => [s.id, s.state, s.owner?.pid ?? null])).toEqual([
    ['a-idle', 'idle', null],
    ['b-running', 'running', process.pid],
    ['c-interrupted', 'interrupted', null],
    ['d-ended', 'ended', null],
    ['e-reopened', 'idle', null],
  ]);
  expect(list[0]).toMatchObject({ cwd: '/ws', model: 'm', lastSeq: new LogBuilder().cleanTurn().entries.length });
  let out = '';
  expect(await sessionsCommand({ store: dir }, { write: (s: string) => (out += s) })).toBe(0);
  const lines = out.trimEnd().split('\n');
  expect(lines).toHaveLength(5);
  expect(lines[1]).toMatch(new RegExp(`^b-running\\s+running\\s+pid ${process.pid} on ${hostname()}\\s+seq\\s+\\d+\\s+/ws$`));
  out = '';
  await sessionsCommand({ store: dir, json: true }, { write: (s: string) => (out += s) });
  const json = JSON.parse(out) as { sessions: { id: string; state: string }[] };
  expect(json.sessions.map((s) => s.state)).toEqual(['idle', 'running', 'interrupted', 'ended', 'idle']);
});

describeWithPostgres('bridle sessions on Postgres', (db) => {
  it('bridle sessions lists a Postgres store with each lease holder and state, a released lease holding nothing', async () => {
    const url = await db.fresh();
    const store = createPostgresSessionStore({ url, leaseMs: 300 });
    const put = async (id: string, b: LogBuilder, release: boolean) => {
      const lock = await store.claim(id);
      const log = store.open(id, { lock });
      const rec = new Recorder(log, () => 0);
      for (const e of named(id, b)) {
        const { seq: _s, at: _a, ...draft } = e;
        rec.append(draft as never);
      }
      await rec.flush();
      if (release) await log.close();
      return lock;
    };
    await put('a-idle', new LogBuilder().cleanTurn(), true);
    const held = await put('b-running', new LogBuilder().cleanTurn().startTurn('more'), false);
    await put('c-ended', new LogBuilder().cleanTurn().add({ kind: 'session/end', by: 'server' }), true);
    let out = '';
    await sessionsCommand({ store: url, json: true }, { write: (s: string) => (out += s) });
    const first = JSON.parse(out) as { store: string; sessions: { id: string; state: string; owner: { pid: number; epoch: number } | null; lastSeq: number }[] };
    expect(first.sessions.map((s) => [s.id, s.state, s.owner?.pid ?? null])).toEqual([
      ['a-idle', 'idle', null],
      ['b-running', 'running', process.pid],
      ['c-ended', 'ended', null],
    ]);
    expect(first.sessions[1]!.owner).toMatchObject({ epoch: 1, host: hostname() });
    expect(first.sessions[0]!.lastSeq).toBe(new LogBuilder().cleanTurn().entries.length);
    // Its lease released with the turn still open (what a takeover finds after a lease expires): interrupted, and nobody's.
    held.release();
    await new Promise((r) => setTimeout(r, 100));
    out = '';
    await sessionsCommand({ store: url }, { write: (s: string) => (out += s) });
    expect(out).toMatch(/^b-running\s+interrupted\s+-\s+seq/m);
  });

  it('bridle sessions, bridle replay and bridle fork use the store a home config.yaml names, composed as for run', async () => {
    const url = await db.fresh();
    const store = createPostgresSessionStore({ url });
    const lock = await store.claim('from-config');
    const log = store.open('from-config', { lock });
    const rec = new Recorder(log, () => 0);
    for (const e of named('from-config', new LogBuilder().cleanTurn())) {
      const { seq: _s, at: _a, ...draft } = e;
      rec.append(draft as never);
    }
    await rec.flush();
    await log.close();
    dir = tempDir('bridle-sessions-home-');
    mkdirSync(join(dir, 'sessions'));
    writeFileSync(join(dir, 'config.yaml'), `store: ${JSON.stringify(url)}\n`);
    vi.stubEnv('BRIDLE_HOME', dir);
    try {
      let out = '';
      expect(await sessionsCommand({ json: true }, { write: (s: string) => (out += s) })).toBe(0);
      expect((JSON.parse(out) as { sessions: { id: string }[] }).sessions.map((s) => s.id)).toEqual(['from-config']);
      out = '';
      expect(await replayCommand('from-config', {}, { write: (s: string) => (out += s) })).toBe(0);
      expect(out).toMatch(/^ok: postgres.*#from-config verifies/m);
      // bridle fork too: the fork is written to that store, and replay of the original names it.
      const io = { out: { write: () => true }, err: { write: () => true } };
      expect(await forkCommand('from-config', {}, io, { clock: () => 0, id: 'fork-of-config' })).toBe(0);
      expect((await store.tail('fork-of-config'))?.length).toBeGreaterThan(0);
      out = '';
      expect(await replayCommand('from-config', {}, { write: (s: string) => (out += s) })).toBe(0);
      expect(out).toMatch(/^forks of this session: fork-of-config \(at seq \d+\)$/m);
      // --store still wins over the file.
      out = '';
      expect(await sessionsCommand({ store: join(dir, 'sessions'), json: true }, { write: (s: string) => (out += s) })).toBe(0);
      expect(JSON.parse(out)).toMatchObject({ sessions: [] });
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

it("bridle sessions judges an owner by its lock's socket, not its pid: a live writer whose pid cannot be seen is running, a dead socket's claim holds nothing", async () => {
  dir = tempDir('bridle-sessions-');
  const write = (id: string, b: LogBuilder) => writeFileSync(join(dir!, `${id}.jsonl`), logText(named(id, b)));
  write('a-unseen', new LogBuilder().cleanTurn().startTurn('more'));
  write('b-dead', new LogBuilder().cleanTurn().startTurn('more'));
  // A live holder whose pid means nothing here (another PID namespace): its socket listens.
  const live = acquireJsonlLock(join(dir, 'a-unseen.jsonl'), { pid: 2 ** 22 + 5 });
  // pid 1 lives, but the socket its claim sits beside has nobody listening: that writer is gone.
  writeFileSync(join(dir, 'b-dead.jsonl.lock'), JSON.stringify({ pid: 1, host: hostname(), since: '2026-01-01T00:00:00.000Z' }));
  spawnSync(process.execPath, ['-e', `process.chdir(${JSON.stringify(dir)}); require('net').createServer().listen('b-dead.jsonl.lock.sock', () => process.kill(process.pid, 'SIGKILL'))`]);
  try {
    expect((await listStore(dir)).sessions.map((s) => [s.id, s.state, s.owner?.pid ?? null])).toEqual([
      ['a-unseen', 'running', 2 ** 22 + 5],
      ['b-dead', 'interrupted', null],
    ]);
  } finally {
    live.release();
  }
});
