/**
 * `bridle serve` as a user runs it (the built CLI, a real process): a client
 * that knows only docs/protocol.md creates a session, watches it, approves a
 * call; the log on disk is what the client saw. Also: `bridle viz --check`,
 * and the embedding example run from `dist/`.
 */
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parseLog } from '../../log/parse.js';
import { CLI, runCli } from '../helpers/cli.js';
import { RpcClient } from '../helpers/rpc-client.js';
import { tempDir } from '../helpers/temp.js';

let child: ChildProcessWithoutNullStreams | undefined;
let root: string | undefined;
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function serve(args: string[], env: NodeJS.ProcessEnv): Promise<{ out: () => string; err: () => string; url: string; token: string; exited: Promise<number | null> }> {
  child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((r) => child!.on('close', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}\n${err}`)), 15_000);
    child!.stdout.on('data', (d) => {
      out += d;
      const url = /bridle serve: (ws:\/\/\S+)/.exec(out)?.[1];
      const token = /^token: (.+)$/m.exec(out)?.[1];
      if (url && token && /^viewer: /m.test(out)) {
        clearTimeout(timer);
        resolve({ out: () => out, err: () => err, url, token, exited });
      }
    });
    child!.on('close', () => reject(new Error(`serve exited:\n${out}\n${err}`)));
  });
}

describe('bridle serve (the CLI)', () => {
  it("a subagent's session: session/create takes its id, depth and parent into its session/start, refuses an id whose log exists (SESSION_EXISTS), and --exit-with-stdin stops the server when stdin ends", async () => {
    root = realpathSync(tempDir('bridle-serve-'));
    const home = join(root, 'home');
    const ws = join(root, 'ws');
    mkdirSync(ws);
    const script = join(root, 'script.json');
    writeFileSync(script, JSON.stringify({ responses: [{ text: 'hello from the child' }] }));
    const s = await serve(['--model', `scripted:${script}`, '--cwd', ws, '--sandbox', 'off', '--exit-with-stdin'], { BRIDLE_HOME: home });
    const c = await RpcClient.connect(s.url, { token: s.token });
    const { sessionId } = await c.call('session/create', { id: 'parent-1.t1.s1.c1', depth: 2, parent: 'parent-1' });
    expect(sessionId).toBe('parent-1.t1.s1.c1');
    await c.call('session/attach', { sessionId });
    await c.call('session/input', { sessionId, text: 'hi' });
    await c.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'turn/end');
    expect(c.entries(sessionId)[0]).toMatchObject({ kind: 'session/start', id: 'parent-1.t1.s1.c1', depth: 2, parent: 'parent-1' });
    await c.call('session/close', { sessionId });
    expect((await c.request('session/create', { id: 'parent-1.t1.s1.c1' })).error).toMatchObject({ code: -32003, data: { reason: 'SESSION_EXISTS' } });
    expect((await c.request('session/create', { id: '../escape' })).error).toMatchObject({ code: -32602 });
    c.close();
    const first = parseLog(readFileSync(join(home, 'sessions', 'parent-1.t1.s1.c1.jsonl'), 'utf8')).entries[0];
    expect(first).toMatchObject({ depth: 2, parent: 'parent-1' });
    child!.stdin.end();
    expect(await s.exited).toBe(0);
  });

  it('serves sessions over the documented protocol, asks approvals of clients, and stops cleanly on SIGINT', async () => {
    root = realpathSync(tempDir('bridle-serve-'));
    const home = join(root, 'home');
    const ws = join(root, 'ws');
    mkdirSync(ws);
    const script = join(root, 'script.json');
    writeFileSync(script, JSON.stringify({ responses: [{ text: 'Writing it.', toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'served\n' } }] }, { text: 'Done.' }] }));
    const s = await serve(['--model', `scripted:${script}`, '--cwd', ws, '--approval', 'ask', '--sandbox', 'off'], { BRIDLE_HOME: home });
    expect(s.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/$/);
    expect(s.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.out()).toContain(`viewer: http://127.0.0.1:`);

    await expect(RpcClient.connect(s.url)).rejects.toMatchObject({ status: 401 });
    const c = await RpcClient.connect(s.url, { token: s.token });
    const { sessionId } = await c.call('session/create', {});
    await c.call('session/attach', { sessionId });
    await c.call('session/input', { sessionId, text: 'write out.txt' });
    const req = (await c.waitFor((m) => m.method === 'approval/request')).params;
    expect(req).toMatchObject({ sessionId, tool: 'write_file', args: { path: 'out.txt' } });
    await c.call('approval/respond', { sessionId, callId: req.callId, outcome: 'allowed-once' });
    await c.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'checkpoint');
    expect(readFileSync(join(ws, 'out.txt'), 'utf8')).toBe('served\n');
    const bad = await c.request('session/create', { cwd: join(ws, 'nope') });
    expect(bad.error).toMatchObject({ code: -32003, message: expect.stringContaining('no such directory'), data: { reason: 'CWD_NOT_FOUND' } });
    c.close();

    child!.kill('SIGINT');
    expect(await s.exited).toBe(0);
    const onDisk = parseLog(readFileSync(join(home, 'sessions', `${sessionId}.jsonl`), 'utf8')).entries;
    expect(c.entries(sessionId)).toEqual(onDisk);
    expect(onDisk.find((e) => e.kind === 'approval/decided')).toMatchObject({ outcome: 'allowed-once', by: 'ws:client-1' });
  });

  it('session/create quotes no file content in its errors, and refuses a cwd outside --cwd and the --allow-cwd dirs', async () => {
    root = realpathSync(tempDir('bridle-serve-'));
    const ws = join(root, 'ws');
    const other = join(root, 'other');
    mkdirSync(join(ws, 'sub'), { recursive: true });
    mkdirSync(other);
    const script = join(root, 'script.json');
    writeFileSync(script, JSON.stringify({ responses: [{ text: 'hi' }] }));
    // Files a client has no business reading: not JSON, JSON with keys of its own, JSON of the wrong shape.
    writeFileSync(join(root, 'shadow'), 'root:$6$TOPSECRET:19000:0:99999:7:::\n');
    writeFileSync(join(root, 'keys.json'), JSON.stringify({ apiKeyTOPSECRET: 'hunter2', responses: [] }));
    writeFileSync(join(root, 'shape.json'), JSON.stringify({ responses: 'TOPSECRET' }));
    const s = await serve(['--model', `scripted:${script}`, '--cwd', ws, '--allow-cwd', other, '--sandbox', 'off'], { BRIDLE_HOME: join(root, 'home') });
    const c = await RpcClient.connect(s.url, { token: s.token });
    for (const file of ['shadow', 'keys.json', 'shape.json', 'missing.json']) {
      const r = await c.request('session/create', { model: `scripted:${join(root, file)}` });
      expect(r.error, file).toMatchObject({ code: -32003, data: { reason: 'MODEL_UNAVAILABLE' } });
      expect(JSON.stringify(r), file).not.toMatch(/TOPSECRET|hunter2|root:/);
    }
    for (const cwd of ['/', root, join(ws, '..'), '/etc']) {
      expect((await c.request('session/create', { cwd })).error, cwd).toMatchObject({ code: -32003, data: { reason: 'CWD_NOT_ALLOWED' } });
    }
    const { sessions } = await c.call('session/list', {});
    expect(sessions).toEqual([]);
    for (const cwd of [join(ws, 'sub'), other]) {
      const { sessionId } = await c.call('session/create', { cwd });
      expect((await c.call('session/list', {})).sessions.find((x: { sessionId: string }) => x.sessionId === sessionId)).toMatchObject({ cwd });
    }
    c.close();
    child!.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    // The operator's log has the details the client did not get.
    expect(s.err()).toContain('is not valid JSON');
  });

  it('a client-named script that is a device, a FIFO, a /proc file or empty is refused without being read: the server stays up', async () => {
    root = realpathSync(tempDir('bridle-serve-'));
    const ws = join(root, 'ws');
    mkdirSync(ws);
    const script = join(root, 'script.json');
    writeFileSync(script, JSON.stringify({ responses: [{ text: 'hi' }] }));
    writeFileSync(join(root, 'empty.json'), '');
    execFileSync('mkfifo', [join(root, 'fifo')]);
    const s = await serve(['--model', `scripted:${script}`, '--cwd', ws, '--sandbox', 'off'], { BRIDLE_HOME: join(root, 'home') });
    const c = await RpcClient.connect(s.url, { token: s.token });
    // Reading any of these would block the server's one thread (or fill its memory) for good.
    for (const file of ['/dev/zero', '/dev/urandom', '/dev/stdin', join(root, 'fifo'), '/proc/self/environ', '/proc/kmsg', join(root, 'empty.json'), root]) {
      const r = await c.request('session/create', { model: `scripted:${file}` });
      expect(r.error, file).toMatchObject({ code: -32003, data: { reason: 'MODEL_UNAVAILABLE' } });
    }
    // Still serving, and a real script still works.
    const { sessionId } = await c.call('session/create', { model: `scripted:${script}` });
    await c.call('session/attach', { sessionId });
    await c.call('session/input', { sessionId, text: 'hello' });
    await c.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'turn/end');
    c.close();
  });

  it('--max-sessions bounds the sessions, session/close and idle release free them: logs stay on disk and verify, file descriptors come back', async () => {
    root = realpathSync(tempDir('bridle-serve-'));
    const home = join(root, 'home');
    const ws = join(root, 'ws');
    mkdirSync(ws);
    const script = join(root, 'script.json');
    writeFileSync(script, JSON.stringify({ responses: [{ text: 'one' }, { text: 'two' }] }));
    const s = await serve(['--model', `scripted:${script}`, '--cwd', ws, '--max-sessions', '3', '--idle-timeout', '1', '--sandbox', 'off'], { BRIDLE_HOME: home });
    const fds = () => readdirSync(`/proc/${child!.pid}/fd`).length;
    const c = await RpcClient.connect(s.url, { token: s.token });
    await c.call('session/list', {});
    const before = fds();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await c.call('session/create', {})).sessionId);
    expect(fds()).toBeGreaterThanOrEqual(before + 3);
    const over = await c.request('session/create', {});
    expect(over.error).toMatchObject({ code: -32005, data: { reason: 'SESSION_LIMIT' } });

    // One closed by hand, mid-use: its attached client hears the end.
    await c.call('session/attach', { sessionId: ids[0] });
    await c.call('session/input', { sessionId: ids[0], text: 'hi' });
    await c.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'checkpoint');
    expect(await c.call('session/close', { sessionId: ids[0] })).toEqual({ closed: true });
    expect(c.notifications('session/closed', ids[0])).toEqual([{ sessionId: ids[0], lastSeq: c.entries(ids[0]).at(-1).seq }]);
    // The other two, never attached, go after a second of idleness.
    for (let i = 0; i < 150 && (await c.call('session/list', {})).sessions.length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await c.call('session/list', {})).toEqual({ sessions: [] });
    // A released log's descriptor is closed asynchronously (the store's close is awaited off the reply): give it a moment.
    for (let i = 0; i < 100 && fds() !== before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(fds()).toBe(before);
    // A slot is free again.
    expect(await c.call('session/create', {})).toHaveProperty('sessionId');
    c.close();
    child!.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    for (const id of ids) {
      const r = await runCli(['replay', id], { env: { BRIDLE_HOME: home } });
      expect(r.code, r.stdout).toBe(0);
      expect(r.stdout).toMatch(/^ok: .* verifies/m);
    }
  });

  it('takes the token from BRIDLE_TOKEN, and warns when bound beyond loopback', async () => {
    root = realpathSync(tempDir('bridle-serve-'));
    const s = await serve(['--host', '0.0.0.0'], { BRIDLE_HOME: join(root, 'home'), BRIDLE_TOKEN: 'from-the-env' });
    expect(s.token).toBe('from $BRIDLE_TOKEN');
    expect(s.out()).not.toContain('from-the-env');
    await new Promise((r) => setTimeout(r, 100));
    expect(s.err()).toMatch(/WARNING: listening on 0\.0\.0\.0, not loopback/);
    const port = /:(\d+)\/$/.exec(s.url)![1];
    const c = await RpcClient.connect(`ws://127.0.0.1:${port}/`, { token: 'from-the-env' });
    expect(await c.call('session/list', {})).toEqual({ sessions: [] });
    c.close();
    child!.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  it('refuses bad flags with exit 2', async () => {
    expect((await runCli(['serve', '--port', 'x'])).code).toBe(2);
    expect((await runCli(['serve', '--allow-origin', 'not a url'])).code).toBe(2);
    for (const bad of [['--max-sessions', '0'], ['--max-sessions', 'lots'], ['--idle-timeout', '-1'], ['--idle-timeout', 'soon'], ['--allow-cwd', '/definitely/not/here']]) {
      const r = await runCli(['serve', '--port', '0', ...bad]);
      expect(r.code, bad.join(' ')).toBe(2);
      expect(r.stderr).toContain(bad[0]);
    }
    expect((await runCli(['run', 'hi', '--model', 'scripted:/nope.json', '--inspect', 'http://x'])).code).toBe(2);
  });

  it('--port that is in use: one line naming the port and EADDRINUSE, exit 2, no stack trace', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as AddressInfo).port;
    try {
      const r = await runCli(['serve', '--port', String(port)]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toEqual([`bridle serve: port ${port} is in use (EADDRINUSE): stop what listens there, or pick another with --port (0: any free port)`]);
      expect(r.stderr).not.toMatch(/\n\s+at |unexpected failure/);
      expect(r.stdout).toBe('');
    } finally {
      taken.close();
    }
  });

  it('`bridle viz --check` compares the checked-in diagrams with the machines (freshness itself: visualizations/generate.test.ts)', async () => {
    const r = await runCli(['viz', '--check']);
    expect(r.stdout, r.stderr).toMatch(/^(diagrams are fresh|stale diagrams: .*)\n$/);
    expect(r.code).toBe(r.stdout.startsWith('diagrams are fresh') ? 0 : 1);
  });

  it('the embedding example runs from dist/', async () => {
    const app = fileURLToPath(new URL('../../dist/examples/embed/app.js', import.meta.url));
    const out = await new Promise<string>((resolve, reject) => {
      const p = spawn(process.execPath, [app]);
      let text = '';
      p.stdout.on('data', (d) => (text += d));
      p.on('error', reject);
      p.on('close', () => resolve(text));
    });
    expect(out.trim()).toBe('Right now: Lisbon: 21°C, clear sky.');
  });
});
