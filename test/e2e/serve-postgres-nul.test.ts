/**
 * `session/input` whose text holds a NUL or a lone surrogate, over `bridle
 * serve` on Postgres (issue 20 item 14): taken and logged byte for byte as on
 * the JSONL store, by the worker that runs the session and forwarded through
 * the inbox by one that relays it — never `-32603 invalid byte sequence`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createPostgresSessionStore } from '../../adapters/store/postgres.js';
import type { Entry } from '../../log/entries.js';
import { verifyLog } from '../../log/verify.js';
import { describeWithPostgres } from '../helpers/postgres.js';
import { RpcClient } from '../helpers/rpc-client.js';
import { startServeProcess, useServeWorld } from '../helpers/serve-process.js';
import { cliBuilt } from '../fault/cli-world.js';

const world = useServeWorld();

describeWithPostgres('odd text through bridle serve on Postgres', (db) => {
  it.runIf(cliBuilt)('session/input holding U+0000 and lone surrogates is accepted and logged byte for byte, on the owner and forwarded from another worker', async () => {
    const url = await db.fresh();
    const root = world.tempDir('bridle-serve-nul-');
    const ws = join(root, 'ws');
    mkdirSync(ws);
    const script = join(root, 'script.json');
    writeFileSync(script, JSON.stringify({ responses: [{ text: 'one' }, { text: 'two' }] }));
    const token = 'nul-token';
    const start = (name: string) =>
      startServeProcess(['--store', url, '--model', `scripted:${script}`, '--cwd', ws, '--approval', 'auto', '--sandbox', 'off', '--sweep-ms', '0'], { BRIDLE_TOKEN: token, BRIDLE_HOME: join(root, `home-${name}`) });
    const a = await start('a');
    const b = await start('b');
    world.servers.push(a, b);
    const ca = await RpcClient.connect(a.url, { token });
    const cb = await RpcClient.connect(b.url, { token });
    world.clients.push(ca, cb);
    const { sessionId } = await ca.call('session/create', {});
    await ca.call('session/attach', { sessionId });
    const here = 'nul \u0000 high \ud800 low \udfff end';
    const there = '\u0000\u0000 forwarded \udbff!';
    expect(await ca.call('session/input', { sessionId, text: here })).toMatchObject({ accepted: true });
    await ca.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'turn/end', 15_000, 'the first turn');
    await cb.call('session/attach', { sessionId });
    expect(await cb.call('session/input', { sessionId, text: there })).toMatchObject({ accepted: true });
    const store = createPostgresSessionStore({ url });
    const read = async () => ((await store.tail(sessionId)) ?? []).map((l) => JSON.parse(l) as Entry);
    let got = await read();
    for (let t = Date.now(); got.filter((e) => e.kind === 'turn/end').length < 2 && Date.now() - t < 15_000; got = await read()) await new Promise((r) => setTimeout(r, 50));
    expect(got.filter((e) => e.kind === 'session/input').map((e) => e.text)).toEqual([here, there]);
    expect(got.filter((e) => e.kind === 'user/message').map((e) => e.text)).toEqual([here, there]);
    expect(verifyLog(got).violations).toEqual([]);
    expect(a.stderr() + b.stderr()).not.toMatch(/invalid byte sequence|Unicode/);
  }, 60_000);
});
