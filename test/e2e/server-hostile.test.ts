/**
 * Hostile clients: bad JSON, wrong types, an 8 MiB frame, no token, a foreign
 * Origin, a client that stops reading. Each loses at most its own connection;
 * the server stays up and serves the next client.
 */
import fs from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RpcClient } from '../helpers/rpc-client.js';
import { serverPerTest } from '../helpers/server-per-test.js';

const srv = serverPerTest();
const connect = (o?: Parameters<typeof RpcClient.connect>[1]) => srv.connect(o);
/** The server still answers a fresh, well-behaved client. */
const stillUp = async () => {
  const c = await connect();
  expect(await c.call('session/list', {})).toHaveProperty('sessions');
};
const refused = (p: Promise<unknown>) => p.then(() => 0, (e: { status?: number }) => e.status ?? -1);

describe('hostile clients', () => {
  it('bad JSON, wrong types and unknown methods get error responses and the connection stays up', async () => {
    const t = await srv.start(() => ({ text: 'hi' }));
    const c = await connect();
    c.sendRaw('{"jsonrpc": "2.0", "id": "raw-1", "method": "session/list"');
    expect((await c.waitFor((m) => m.error?.code === -32700)).id).toBeNull();
    c.sendRaw(Buffer.from([0xff, 0xfe, 0x00]));
    await c.waitFor((m) => c.messages.filter((x) => x.error?.code === -32700).length === 2);
    c.sendRaw('{"jsonrpc": "1.0", "id": "raw-2", "method": "session/list"}');
    expect((await c.waitFor((m) => m.id === 'raw-2')).error?.code).toBe(-32600);
    expect((await c.request('session/launch-missiles', {})).error?.code).toBe(-32601);
    const bad = await c.request('session/attach', { sessionId: 42, fromSeq: -1 });
    expect(bad.error?.code).toBe(-32602);
    expect((bad.error?.data as { path: string[] }[]).map((i) => i.path.join('.')).sort()).toEqual(['fromSeq', 'sessionId']);
    expect((await c.request('session/input', { sessionId: 's1', text: 'x', mode: 'loud' })).error?.code).toBe(-32602);
    expect((await c.request('approval/respond', { sessionId: 's1', callId: 'c', outcome: 'allowed-always' })).error?.code).toBe(-32602);
    // Same connection, still working.
    expect(await c.call('session/list', {})).toEqual({ sessions: [] });
    expect(c.closed).toBeUndefined();
  });

  it('an 8 MiB frame closes that connection with 1009; the server stays up', async () => {
    const t = await srv.start(() => ({ text: 'hi' }));
    const c = await connect();
    const { sessionId } = await c.call('session/create', {});
    c.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'session/input', params: { sessionId, text: 'x'.repeat(8 * 1024 * 1024) } }));
    const closed = await c.waitClosed();
    expect(closed.code).toBe(1009);
    await stillUp();
    // Nothing of the oversized message reached the session.
    expect(t.sessions[0]!.recorder.entries.map((e) => e.kind)).toEqual(['session/start']);
  });

  it('refuses a missing or wrong token at the upgrade with 401', async () => {
    const t = await srv.start(() => ({ text: 'hi' }));
    expect(await refused(RpcClient.connect(t.server.url))).toBe(401);
    expect(await refused(RpcClient.connect(t.server.url, { token: 'wrong' }))).toBe(401);
    expect(await refused(RpcClient.connect(`${t.server.url}?token=wrong`))).toBe(401);
    // ?token= works as well as the header.
    const viaQuery = await RpcClient.connect(`${t.server.url}?token=${t.token}`);
    await stillUp();
    viaQuery.close();
  });

  it("refuses a foreign Origin with 403, accepts the server's own", async () => {
    const t = await srv.start(() => ({ text: 'hi' }), { allowOrigins: ['http://viewer.example'] });
    expect(await refused(RpcClient.connect(t.server.url, { token: t.token, origin: 'http://evil.example' }))).toBe(403);
    expect(await refused(RpcClient.connect(t.server.url, { token: t.token, origin: `http://127.0.0.1:${t.server.port + 1}` }))).toBe(403);
    await connect({ token: t.token, origin: `http://127.0.0.1:${t.server.port}` });
    await connect({ token: t.token, origin: `http://localhost:${t.server.port}` });
    await connect({ token: t.token, origin: 'http://viewer.example' });
    await stillUp();
  });

  it('disconnects a client that stops reading, with a reason; the others go on', async () => {
    const problems: string[] = [];
    const t = await srv.start(() => ({ text: 'ok' }), { maxBuffered: 1024 * 1024, onProblem: (m) => problems.push(m) });
    const slow = await connect();
    const fine = await connect();
    const { sessionId } = await fine.call('session/create', {});
    await slow.call('session/attach', { sessionId });
    await fine.call('session/attach', { sessionId });
    slow.ws.pause();
    // ~24 MiB of entries in 120 turns: more than the kernel's socket buffers hold for a client that does not read.
    const text = 'y'.repeat(100 * 1024);
    for (let i = 0; i < 120; i++) await fine.call('session/input', { sessionId, text });
    await fine.waitFor(() => fine.entries(sessionId).filter((e) => e.kind === 'turn/end').length === 120, 30_000, '120 turns');
    expect(problems.some((p) => p.includes('client-1') && p.includes('slow consumer'))).toBe(true);
    slow.ws.resume();
    const closed = await slow.waitClosed();
    expect([1008, 1006]).toContain(closed.code);
    if (closed.code === 1008) expect(closed.reason).toMatch(/slow consumer/);
    expect(fine.closed).toBeUndefined();
    await stillUp();
  });

  it('serves the viewer page and nothing outside it', async () => {
    const t = await srv.start(() => ({ text: 'hi' }), { viewer: { dir: new URL('../../visualizations/viewer/', import.meta.url).pathname, diagrams: new URL('../../visualizations/', import.meta.url).pathname } });
    const get = (path: string, method = 'GET') =>
      new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: t.server.port, path, method }, (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        });
        req.on('error', reject);
        req.end();
      });
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<script src="viewer.js"');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect((await get('/diagrams/session.svg')).body).toContain('<svg');
    expect((await get('/viewer.js')).status).toBe(200);
    expect((await get('/../package.json')).status).toBe(404);
    expect((await get('/diagrams/..%2Fpackage.json')).status).toBe(404);
    expect((await get('/%2e%2e/package.json')).status).toBe(404);
    expect((await get('/', 'POST')).status).toBe(405);
    await stillUp();
  });

  it('approval/respond from a client not attached to the session is refused with -32004 NOT_ATTACHED and decides nothing', async () => {
    const t = await srv.start((_req, i) => (i === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }] } : { text: 'done' }), { approval: 'ask' });
    const owner = await connect();
    const stranger = await connect();
    const { sessionId } = await owner.call('session/create', {});
    await owner.call('session/attach', { sessionId });
    await owner.call('session/input', { sessionId, text: 'write' });
    const { callId } = (await owner.waitFor((m) => m.method === 'approval/request')).params;
    for (const outcome of ['allowed-once', 'rejected']) {
      const r = await stranger.request('approval/respond', { sessionId, callId, outcome });
      expect(r.error).toMatchObject({ code: -32004, data: { reason: 'NOT_ATTACHED' } });
    }
    expect(t.sessions[0]!.recorder.entries.some((e) => e.kind === 'approval/decided')).toBe(false);
    // Attached, the same client may answer; and the owner's answer still counts.
    await stranger.call('session/attach', { sessionId });
    expect(await stranger.call('approval/respond', { sessionId, callId, outcome: 'rejected' })).toEqual({ accepted: true });
    await owner.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'turn/end');
    expect(owner.entries(sessionId).find((e) => e.kind === 'approval/decided')).toMatchObject({ outcome: 'rejected', by: 'ws:client-2' });
    expect(stranger.closed).toBeUndefined();
  });

  it('session/create refuses a cwd outside the workspace ("/", "..", a symlink out, a relative path) as CWD_NOT_ALLOWED, opening nothing', async () => {
    const t = await srv.start(() => ({ text: 'hi' }));
    const c = await connect();
    fs.symlinkSync('/', path.join(t.workspace, 'escape'));
    fs.mkdirSync(path.join(t.workspace, 'sub'));
    fs.writeFileSync(path.join(t.workspace, 'file'), '');
    const tries: [string, string][] = [
      ['/', 'CWD_NOT_ALLOWED'],
      ['/etc', 'CWD_NOT_ALLOWED'],
      [`${t.workspace}/..`, 'CWD_NOT_ALLOWED'],
      [path.dirname(t.workspace), 'CWD_NOT_ALLOWED'],
      [`${t.workspace}/escape`, 'CWD_NOT_ALLOWED'],
      [`${t.workspace}/escape/etc`, 'CWD_NOT_ALLOWED'],
      ['ws', 'CWD_NOT_ALLOWED'],
      [`${t.workspace}/missing`, 'CWD_NOT_FOUND'],
      [`${t.workspace}/file`, 'CWD_NOT_A_DIRECTORY'],
    ];
    for (const [cwd, reason] of tries) {
      const r = await c.request('session/create', { cwd });
      expect(r.error, cwd).toMatchObject({ code: -32003, data: { reason } });
    }
    expect(t.sessions).toHaveLength(0);
    const ok = await c.call('session/create', { cwd: `${t.workspace}/sub` });
    expect((await c.call('session/list', {})).sessions).toEqual([expect.objectContaining({ sessionId: ok.sessionId, cwd: `${t.workspace}/sub` })]);
  });

  it("a create that fails unexpectedly does not send the failure's text (it may quote a file) to the client", async () => {
    const problems: string[] = [];
    const t = await srv.start(() => ({ text: 'hi' }), {
      onProblem: (m) => problems.push(m),
      beforeOpen: () => {
        throw new SyntaxError('Unexpected token \'r\', "root:x:0:0:root:/root:/bin/bash" is not valid JSON');
      },
    });
    const c = await connect();
    const r = await c.request('session/create', {});
    expect(r.error).toMatchObject({ code: -32003, data: { reason: 'OPEN_FAILED' } });
    expect(JSON.stringify(r)).not.toContain('root:x');
    expect(problems.some((p) => p.includes('root:x'))).toBe(true);
    await stillUp();
  });

  it('a flood of session/create from several clients never holds more than maxSessions; each extra gets -32005 and the server stays up', async () => {
    const t = await srv.start(() => ({ text: 'hi' }), { maxSessions: 64 });
    const cs = await Promise.all(Array.from({ length: 4 }, () => connect()));
    // 2,000 creates, 500 per client, as batches of 50 so they interleave across connections.
    const batch = Array.from({ length: 50 }, (_, i) => ({ jsonrpc: '2.0', id: `b${i}`, method: 'session/create', params: {} }));
    for (let k = 0; k < 10; k++) for (const c of cs) c.sendRaw(JSON.stringify(batch));
    const answers = () => cs.flatMap((c) => c.messages.filter((m) => typeof m.id === 'string' && m.id.startsWith('b')));
    for (let i = 0; i < 500 && answers().length < 2000; i++) await new Promise((r) => setTimeout(r, 20));
    const all = answers();
    expect(all).toHaveLength(2000);
    expect(all.filter((m) => m.result)).toHaveLength(64);
    expect(all.filter((m) => m.error?.code === -32005)).toHaveLength(1936);
    expect(t.sessions).toHaveLength(64);
    await stillUp();
  });
});

