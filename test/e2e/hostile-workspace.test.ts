/**
 * A hostile workspace under `serve`: one session's model aims the file tools at
 * FIFOs, a 600 MiB file without a newline, a catastrophic grep pattern and a
 * symlinked AGENTS.md, while another session on the same server works
 * normally. Each of those once took the whole process down or froze it (a
 * wedged thread pool, an uncaught RangeError, a blocked event loop); now each
 * call gets a named error, the other session answers promptly and the server
 * stays up.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RpcClient } from '../helpers/rpc-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let t: TestServer | undefined;
const clients: RpcClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  // Unblocks a reader stuck opening a FIFO, so a failing run cannot wedge the next test.
  for (let i = 1; i <= 5 && t; i++) {
    try {
      fs.closeSync(fs.openSync(path.join(t.workspace, `fifo${i}`), fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
    } catch {
      // no reader waiting
    }
  }
  await t?.stop();
  t = undefined;
});

const HOSTILE = [
  ...[1, 2, 3, 4, 5].map((i) => ({ name: 'read_file', arguments: { path: `fifo${i}` } })),
  { name: 'grep', arguments: { pattern: 'x', path: 'fifo1' } },
  { name: 'edit_file', arguments: { path: 'fifo2', old_text: 'x', new_text: 'y' } },
  { name: 'write_file', arguments: { path: 'fifo3', content: 'y' } },
  { name: 'read_file', arguments: { path: 'huge.txt' } },
  { name: 'read_file', arguments: { path: 'AGENTS.md' } },
  { name: 'grep', arguments: { pattern: '^(a+)+$', path: 'evil.txt' } },
];
const turnEnded = (id: string) => (m: { method?: string; params?: any }) => m.method === 'session/entry' && m.params.sessionId === id && m.params.entry.kind === 'turn/end';

describe('a hostile workspace under serve', () => {
  it('FIFOs, a huge one-line file, a ReDoS pattern and a symlinked AGENTS.md: named errors, the other session answers, the server stays up', async () => {
    t = await startTestServer((req, i) => {
      const hostile = JSON.stringify(req.messages).includes('be hostile');
      if (i === 0) return hostile ? { toolCalls: HOSTILE } : { toolCalls: [{ name: 'read_file', arguments: { path: 'plain.txt' } }] };
      return { text: hostile ? 'hostile done' : 'calm done' };
    });
    const ws = t.workspace;
    for (let i = 1; i <= 5; i++) execFileSync('mkfifo', [path.join(ws, `fifo${i}`)]);
    const fd = fs.openSync(path.join(ws, 'huge.txt'), 'w');
    fs.writeSync(fd, 'a'.repeat(8192));
    fs.ftruncateSync(fd, 600 * 1024 * 1024);
    fs.closeSync(fd);
    fs.writeFileSync(path.join(ws, 'evil.txt'), `${'a'.repeat(40)}b\n`);
    fs.writeFileSync(path.join(ws, 'plain.txt'), 'plain\n');
    fs.symlinkSync('/proc/self/environ', path.join(ws, 'AGENTS.md'));

    const c = await RpcClient.connect(t.server.url, { token: t.token });
    clients.push(c);
    const hostile = (await c.call('session/create', {})).sessionId as string;
    const calm = (await c.call('session/create', {})).sessionId as string;
    await c.call('session/attach', { sessionId: hostile });
    await c.call('session/attach', { sessionId: calm });

    await c.call('session/input', { sessionId: hostile, text: 'be hostile' });
    // The hostile calls are running (the grep sits in its worker until its 30 s deadline) when the calm session starts.
    await c.waitFor((m) => m.method === 'session/entry' && m.params.sessionId === hostile && m.params.entry.kind === 'tool/dispatch', 10_000);
    const started = performance.now();
    await c.call('session/input', { sessionId: calm, text: 'be calm' });
    await c.waitFor(turnEnded(calm), 10_000, 'the calm turn');
    expect(performance.now() - started).toBeLessThan(5000);
    const calmResult = c.entries(calm).find((e) => e.kind === 'tool/result');
    expect(calmResult).toMatchObject({ status: 'ok' });

    // Everything but the grep has answered by now; cancelling ends the grep (its worker is terminated).
    const results = () => c.entries(hostile).filter((e) => e.kind === 'tool/result');
    await c.waitFor(() => results().length >= HOSTILE.length - 1, 20_000, 'the hostile results');
    await c.call('session/cancel', { sessionId: hostile });
    await c.waitFor(turnEnded(hostile), 10_000, 'the hostile turn');

    const codes = results().map((r) => `${HOSTILE[Number(r.callId.split('.c')[1]) - 1]!.arguments.path} ${r.code ?? r.status}`);
    expect(codes.sort()).toEqual(
      [
        'AGENTS.md OUTSIDE_WORKSPACE',
        'evil.txt ABORTED',
        'fifo1 NOT_A_FILE',
        'fifo1 NOT_A_FILE',
        'fifo2 NOT_A_FILE',
        'fifo2 NOT_A_FILE',
        'fifo3 NOT_A_FILE',
        'fifo3 NOT_A_FILE',
        'fifo4 NOT_A_FILE',
        'fifo5 NOT_A_FILE',
        'huge.txt ok',
      ].sort(),
    );
    // The symlinked AGENTS.md reached no request: the system prompt has a note in its place.
    const header = t.sessions[0]!.recorder.entries.find((e) => e.kind === 'request/header') as { system: string } | undefined;
    expect(header?.system).toContain('[not read: AGENTS.md leads outside the project');
    expect(header?.system).not.toContain(`PATH=${process.env.PATH}`);

    // The server still serves a fresh client.
    const fresh = await RpcClient.connect(t.server.url, { token: t.token });
    clients.push(fresh);
    expect((await fresh.call('session/list', {})).sessions).toHaveLength(2);
  });
});
