/**
 * Workers with different policies on one Postgres store (issue 20 item 15,
 * ADR 0042), with real `bridle serve` processes. Worker A runs a session
 * under `--approval ask` and is SIGKILLed while a question is pending. Worker
 * W, started with `--approval auto` (wider than the session's), sweeps the
 * store first: it must refuse the session by name (`POLICY_WIDENED`) without
 * claiming its lease — no `session/takeover`, no release to nobody — so that
 * worker N, whose policy is the session's, later takes it over in its own
 * sweep, asks the pending question again and finishes the turn.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
const { servers, clients } = world;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const writers = (es: Entry[]) =>
  es.flatMap((e) => (e.kind === 'session/takeover' ? [e.by.pid] : e.kind === 'session/reopen' && e.writer ? [e.writer.pid] : []));

describeWithPostgres('workers with different policies on one Postgres store', (db) => {
  it.runIf(cliBuilt)('a worker whose policy is wider than a session\'s refuses it POLICY_WIDENED without touching its lease, and a worker with the session\'s policy takes it over in its sweep and finishes its pending question', async () => {
    const url = await db.fresh();
    const leaseMs = 1000;
    const sweepMs = 300;
    const root = world.tempDir('bridle-policy-workers-');
    const ws = join(root, 'ws');
    mkdirSync(ws);
    writeFileSync(join(root, 'a.json'), JSON.stringify({ responses: [{ text: 'writing', toolCalls: [{ name: 'bash', arguments: { command: 'echo ran >> marker' } }] }] }));
    writeFileSync(join(root, 'n.json'), JSON.stringify({ responses: [{ text: 'finished on N' }] }));
    const token = 'policy-token';
    const start = (name: string, approval: string, script: string) =>
      startServeProcess(['--store', url, '--lease-ms', String(leaseMs), '--cwd', ws, '--approval', approval, '--sandbox', 'off', '--sweep-ms', String(sweepMs), '--model', `scripted:${join(root, script)}`], {
        BRIDLE_TOKEN: token,
        BRIDLE_HOME: join(root, `home-${name}`),
      });
    const a = await start('a', 'ask', 'a.json');
    servers.push(a);
    const ca = await RpcClient.connect(a.url, { token });
    clients.push(ca);
    const { sessionId } = await ca.call('session/create', {});
    await ca.call('session/attach', { sessionId });
    await ca.call('session/input', { sessionId, text: 'do the work' });
    await ca.waitFor((m) => m.method === 'approval/request', 15_000, 'the question on A');
    a.proc.kill('SIGKILL');
    await a.exit;

    const store = createPostgresSessionStore({ url });
    const read = async () => ((await store.tail(sessionId)) ?? []).map((l) => JSON.parse(l) as Entry);
    const before = await read();

    // W (wider: auto) sweeps alone first, well past the lease's expiry: it refuses by name and touches nothing.
    const w = await start('w', 'auto', 'n.json');
    servers.push(w);
    for (let t = Date.now(); !w.stderr().includes(`sweep: session ${sessionId} not taken over`) && Date.now() - t < 20_000; ) await sleep(50);
    await sleep(4 * sweepMs);
    expect(w.stderr()).toContain(`sweep: session ${sessionId} not taken over`);
    expect(w.stderr()).toContain('POLICY_WIDENED');
    expect(w.stderr()).not.toContain('MODEL_UNAVAILABLE');
    expect(w.stderr()).not.toContain('session/create');
    // Said once: the refusal holds until the log changes.
    expect(w.stderr().split(`sweep: session ${sessionId} not taken over`)).toHaveLength(2);
    expect(await read()).toEqual(before);

    // N (the session's own policy) takes it over in its sweep, with no client asking.
    const n = await start('n', 'ask', 'n.json');
    servers.push(n);
    let got = await read();
    for (let t = Date.now(); !writers(got).includes(n.proc.pid!) && Date.now() - t < 20_000; ) {
      await sleep(50);
      got = await read();
    }
    expect(writers(got), 'N took the session over in its sweep').toContain(n.proc.pid);
    // Attached on N: the pending question is asked again there, and the answer finishes the turn.
    const cn = await RpcClient.connect(n.url, { token });
    clients.push(cn);
    await cn.call('session/attach', { sessionId });
    const asked = await cn.waitFor((m) => m.method === 'approval/request', 15_000, 'the question, asked again on N');
    expect(await cn.call('approval/respond', { sessionId, callId: asked.params.callId, outcome: 'allowed-once' })).toEqual({ accepted: true });
    for (let t = Date.now(); !got.some((e) => e.kind === 'turn/end') && Date.now() - t < 15_000; ) {
      await sleep(50);
      got = await read();
    }
    // W cannot run it, but may still relay it while N runs it: an attach there is not refused.
    const cw = await RpcClient.connect(w.url, { token });
    clients.push(cw);
    await cw.call('session/attach', { sessionId });
    await cw.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'turn/end', 10_000, 'the turn\'s end, relayed to W');
    expect(verifyLog(got).violations).toEqual([]);
    const takeovers = got.filter((e): e is Extract<Entry, { kind: 'session/takeover' }> => e.kind === 'session/takeover');
    expect(takeovers).toHaveLength(1);
    expect(takeovers[0]).toMatchObject({ stale: { pid: a.proc.pid }, by: { pid: n.proc.pid } });
    expect(writers(got)).not.toContain(w.proc.pid);
    expect(got.filter((e) => e.kind === 'turn/end')).toEqual([expect.objectContaining({ reason: 'completed' })]);
    expect(got.filter((e) => e.kind === 'assistant/message').at(-1)).toMatchObject({ blocks: [{ type: 'text', text: 'finished on N' }] });
    expect(existsSync(join(ws, 'marker')) && readFileSync(join(ws, 'marker'), 'utf8')).toBe('ran\n');
  }, 120_000);
});
