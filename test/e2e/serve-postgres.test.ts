/**
 * `bridle serve --store postgres://…` (the built CLI, a real process): a
 * session created over the protocol is written to the database under its
 * lease, a client attached to it receives every entry the database holds, in
 * order, and stopping the server releases the lease (ADR 0025).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createPostgresSessionStore } from '../../adapters/store/postgres.js';
import { describeWithPostgres } from '../helpers/postgres.js';
import { RpcClient } from '../helpers/rpc-client.js';
import { startServeProcess, useServeWorld } from '../helpers/serve-process.js';

const world = useServeWorld();

describeWithPostgres('bridle serve on Postgres', (db) => {
  it('writes the sessions it serves to the database under their leases, and clients get every entry in order', async () => {
    const url = await db.fresh();
    const root = world.tempDir('bridle-serve-pg-');
    const ws = join(root, 'ws');
    mkdirSync(ws);
    const script = join(root, 'script.json');
    writeFileSync(script, JSON.stringify({ responses: [{ text: 'Writing it.', toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'served\n' } }] }, { text: 'Done.' }] }));
    const s = await startServeProcess(['--store', url, '--model', `scripted:${script}`, '--cwd', ws, '--approval', 'auto', '--sandbox', 'off'], { BRIDLE_HOME: join(root, 'home') });
    world.servers.push(s);
    const c = await RpcClient.connect(s.url, { token: s.token });
    const { sessionId } = await c.call('session/create', {});
    await c.call('session/attach', { sessionId });
    await c.call('session/input', { sessionId, text: 'write out.txt' });
    await c.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'checkpoint');
    const store = createPostgresSessionStore({ url });
    // Held while the server has it open.
    await expect(store.claim(sessionId)).rejects.toMatchObject({ code: 'SESSION_LOCKED' });
    c.close();
    expect(await s.stop(), s.stderr()).toBe(0);
    const stored = (await store.tail(sessionId))!.map((l) => JSON.parse(l));
    expect(c.entries(sessionId)).toEqual(stored);
    expect(stored.map((e) => e.kind)).toContain('tool/result');
    // Released as the server closed it.
    expect((await store.claim(sessionId)).tookOver).toBeUndefined();
  }, 60_000);
});
