/**
 * The lease sweep (ADR 0034, issue #14 item 3's third trigger), with real
 * `bridle serve` processes on one Postgres: worker A runs a session, is
 * SIGKILLed during a non-idempotent bash call with an input queued behind
 * it, and no client asks for the session anywhere. Workers B and C both
 * sweep the store: exactly one of them takes the session over within the
 * lease plus the sweep interval plus a second, repairs it (the call closed
 * as outcome unknown, never run again) and runs the queued input once; the
 * other lets go quietly. A session A left at rest is nobody's work.
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
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
let root: string;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const isEntry = (kind: string) => (m: { method?: string; params?: any }) => m.method === 'session/entry' && m.params.entry.kind === kind;

describeWithPostgres('the lease sweep of bridle serve on Postgres', (db) => {
  it.runIf(cliBuilt)('a session whose owner was SIGKILLed mid-turn with queued input and no client attached is taken over by the sweep of another worker within lease + sweep interval + 1 s, its queued input runs once, the log verifies, no tool ran twice', async () => {
    const url = await db.fresh();
    const leaseMs = 1000;
    const sweepMs = 300;
    root = world.tempDir('bridle-sweep-');
    const ws = join(root, 'ws');
    mkdirSync(ws);
    const slow = { responses: [{ text: 'working', toolCalls: [{ name: 'bash', arguments: { command: 'echo ran >> marker; for i in $(seq 400); do [ -f go ] && break; sleep 0.05; done' } }] }] };
    writeFileSync(join(root, 'a.json'), JSON.stringify(slow));
    writeFileSync(join(root, 'swept.json'), JSON.stringify({ responses: [{ text: 'swept and answered' }] }));
    const common = ['--store', url, '--lease-ms', String(leaseMs), '--cwd', ws, '--approval', 'auto', '--sandbox', 'off', '--sweep-ms', String(sweepMs)];
    const token = 'sweep-token';
    const start = (name: string, script: string) => startServeProcess([...common, '--model', `scripted:${join(root!, script)}`], { BRIDLE_TOKEN: token, BRIDLE_HOME: join(root!, `home-${name}`) });
    const a = await start('a', 'a.json');
    servers.push(a);
    const ca = await RpcClient.connect(a.url, { token });
    clients.push(ca);
    // One session at rest on A (nothing to do), one mid-turn with an input queued behind the turn.
    const { sessionId: atRest } = await ca.call('session/create', {});
    const { sessionId } = await ca.call('session/create', {});
    await ca.call('session/attach', { sessionId });
    await ca.call('session/input', { sessionId, text: 'do the work' });
    await ca.waitFor(isEntry('tool/dispatch'), 20_000, 'the dispatch on A');
    for (let i = 0; !existsSync(join(ws, 'marker')) && i < 200; i++) await sleep(25);
    const { seq: queued } = await ca.call('session/input', { sessionId, text: 'then this' });
    // B and C sweep the store; no client of theirs asks for anything.
    const [b, c] = await Promise.all([start('b', 'swept.json'), start('c', 'swept.json')]);
    servers.push(b, c);
    a.proc.kill('SIGKILL');
    const killed = Date.now();
    await a.exit;
    writeFileSync(join(ws, 'go'), '');

    const store = createPostgresSessionStore({ url });
    const read = async () => ((await store.tail(sessionId)) ?? []).map((l) => JSON.parse(l) as Entry);
    let got = await read();
    while (!got.some((e) => e.kind === 'session/takeover') && Date.now() - killed < leaseMs + sweepMs + 5000) {
      await sleep(25);
      got = await read();
    }
    const tookMs = Date.now() - killed;
    expect(got.some((e) => e.kind === 'session/takeover'), 'a sweep took the session over').toBe(true);
    expect(tookMs).toBeLessThan(leaseMs + sweepMs + 1000);
    // The queued input's turn runs to its end on the worker that took it.
    const settled = (es: Entry[]) => {
      const ends = es.filter((e) => e.kind === 'turn/end');
      return ends.length >= 2 && es.some((e) => e.kind === 'checkpoint' && e.seq > ends[1]!.seq);
    };
    while (!settled(got) && Date.now() - killed < 20_000) {
      await sleep(50);
      got = await read();
    }
    expect(got.map((e) => e.seq)).toEqual(got.map((_e, i) => i + 1));
    expect(verifyLog(got).violations).toEqual([]);
    const takeovers = got.filter((e): e is Extract<Entry, { kind: 'session/takeover' }> => e.kind === 'session/takeover');
    expect(takeovers).toHaveLength(1);
    expect(takeovers[0]).toMatchObject({ stale: { pid: a.proc.pid } });
    expect([b.proc.pid, c.proc.pid]).toContain(takeovers[0]!.by.pid);
    expect(got.filter((e) => e.kind === 'tool/result')).toEqual([expect.objectContaining({ code: 'TOOL_OUTCOME_UNKNOWN' })]);
    expect(got.filter((e) => e.kind === 'session/input').map((e) => e.text)).toEqual(['do the work', 'then this']);
    expect(got.filter((e) => e.kind === 'turn/start' && e.from === queued)).toHaveLength(1);
    expect(got.filter((e) => e.kind === 'turn/end').map((e) => (e as Extract<Entry, { kind: 'turn/end' }>).reason)).toEqual(['interrupted', 'completed']);
    expect(got.filter((e) => e.kind === 'assistant/message').at(-1)).toMatchObject({ blocks: [{ type: 'text', text: 'swept and answered' }] });
    expect(readFileSync(join(ws, 'marker'), 'utf8')).toBe('ran\n');
    // A few sweeps later: nothing more, the session at rest untouched, and the worker that lost the claim said nothing of it.
    await sleep(3 * sweepMs);
    expect((await read()).length).toBe(got.length);
    expect(((await store.tail(atRest)) ?? []).map((l) => (JSON.parse(l) as Entry).kind)).not.toContain('session/takeover');
    for (const s of [b, c]) expect(s.stderr()).not.toMatch(/bridle serve: sweep:|SESSION_LOCKED/);
    const loser = takeovers[0]!.by.pid === b.proc.pid ? c : b;
    expect(loser.stderr()).not.toContain(sessionId);
  }, 60_000);
});
