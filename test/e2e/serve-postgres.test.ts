/**
 * `bridle serve --store postgres://…` (the built CLI, a real process): a
 * session created over the protocol is written to the database under its
 * lease, a client attached to it receives every entry the database holds, in
 * order, and stopping the server releases the lease (ADR 0025).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createPostgresSessionStore } from '../../adapters/store/postgres.js';
import { CLI } from '../helpers/cli.js';
import { describeWithPostgres } from '../helpers/postgres.js';
import { RpcClient } from '../helpers/rpc-client.js';

let child: ChildProcessWithoutNullStreams | undefined;
let root: string | undefined;
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

describeWithPostgres('bridle serve on Postgres', (db) => {
  it('writes the sessions it serves to the database under their leases, and clients get every entry in order', async () => {
    const url = await db.fresh();
    root = realpathSync(mkdtempSync(join(tmpdir(), 'bridle-serve-pg-')));
    const ws = join(root, 'ws');
    mkdirSync(ws);
    const script = join(root, 'script.json');
    writeFileSync(script, JSON.stringify({ responses: [{ text: 'Writing it.', toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'served\n' } }] }, { text: 'Done.' }] }));
    child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--store', url, '--model', `scripted:${script}`, '--cwd', ws, '--approval', 'auto', '--sandbox', 'off'], { env: { PATH: process.env.PATH, HOME: process.env.HOME, BRIDLE_HOME: join(root, 'home') } });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((r) => child!.on('close', (code) => r(code)));
    const started = new Promise<{ url: string; token: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}\n${err}`)), 15_000);
      child!.stdout.on('data', (d) => {
        out += d;
        const u = /bridle serve: (ws:\/\/\S+)/.exec(out)?.[1];
        const token = /^token: (.+)$/m.exec(out)?.[1];
        if (u && token && /^viewer: /m.test(out)) {
          clearTimeout(timer);
          resolve({ url: u, token });
        }
      });
    });
    const s = await started;
    const c = await RpcClient.connect(s.url, { token: s.token });
    const { sessionId } = await c.call('session/create', {});
    await c.call('session/attach', { sessionId });
    await c.call('session/input', { sessionId, text: 'write out.txt' });
    await c.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'checkpoint');
    const store = createPostgresSessionStore({ url });
    // Held while the server has it open.
    await expect(store.claim(sessionId)).rejects.toMatchObject({ code: 'SESSION_LOCKED' });
    c.close();
    child.kill('SIGINT');
    expect(await exited, err).toBe(0);
    const stored = (await store.tail(sessionId))!.map((l) => JSON.parse(l));
    expect(c.entries(sessionId)).toEqual(stored);
    expect(stored.map((e) => e.kind)).toContain('tool/result');
    // Released as the server closed it.
    expect((await store.claim(sessionId)).tookOver).toBeUndefined();
  }, 60_000);
});
