/**
 * Two `bridle serve` workers on one Postgres store (issue #14 item 4, ADR
 * 0030), as real processes with the same token and store on different ports:
 * a session created on A and attached on B streams every durable entry to
 * B's client, in order and once; input sent on B is forwarded to A, which
 * runs it; when A is SIGKILLed during a non-idempotent bash call, B takes the
 * session over once A's lease has expired, repairs it (the call closed as
 * outcome unknown, never run again) and runs the input itself. ADR 0032: a
 * client on B is asked A's approvals and its answer, and its cancel, are
 * forwarded to A and applied there. ADR 0035: B's client gets the live text
 * of A's model too.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createPostgresSessionStore } from '../../adapters/store/postgres.js';
import { verifyLog } from '../../log/verify.js';
import { CLI } from '../helpers/cli.js';
import { describeWithPostgres } from '../helpers/postgres.js';
import { RpcClient } from '../helpers/rpc-client.js';
import { startServeProcess, useServeWorld } from '../helpers/serve-process.js';
import { cliBuilt } from '../fault/cli-world.js';

const world = useServeWorld();
const { servers, clients } = world;
let root: string;

const isEntry = (kind: string, after = 0) => (m: { method?: string; params?: any }) => m.method === 'session/entry' && m.params.entry.kind === kind && m.params.entry.seq > after;

async function twoWorkers(url: string, scriptA: object, scriptB: object, leaseMs: number, approval = 'auto') {
  root = world.tempDir('bridle-workers-');
  const ws = join(root, 'ws');
  mkdirSync(ws);
  writeFileSync(join(root, 'a.json'), JSON.stringify(scriptA));
  writeFileSync(join(root, 'b.json'), JSON.stringify(scriptB));
  const common = ['--store', url, '--lease-ms', String(leaseMs), '--cwd', ws, '--approval', approval, '--sandbox', 'off'];
  const token = 'two-workers-token';
  const [a, b] = await Promise.all([
    startServeProcess([...common, '--model', `scripted:${join(root, 'a.json')}`], { BRIDLE_TOKEN: token, BRIDLE_HOME: join(root, 'home-a') }),
    startServeProcess([...common, '--model', `scripted:${join(root, 'b.json')}`], { BRIDLE_TOKEN: token, BRIDLE_HOME: join(root, 'home-b') }),
  ]);
  servers.push(a, b);
  const [ca, cb] = await Promise.all([RpcClient.connect(a.url, { token }), RpcClient.connect(b.url, { token })]);
  clients.push(ca, cb);
  return { ws, a, b, ca, cb, token };
}

/**
 * Two workers with a 1000 ms lease; a session created on A and attached on B; its input, sent on `inputOn`,
 * starts a non-idempotent bash call on A that marks the workspace and waits; A is SIGKILLed once the mark is
 * there, and the call is let go (`go`), so a re-run would mark twice.
 */
async function ownerKilledMidBash(url: string, scriptB: object, inputOn: 'a' | 'b') {
  const slow = { responses: [{ text: 'working', toolCalls: [{ name: 'bash', arguments: { command: 'echo ran >> marker; for i in $(seq 400); do [ -f go ] && break; sleep 0.05; done' } }] }] };
  const leaseMs = 1000;
  const { ws, a, ca, cb } = await twoWorkers(url, slow, scriptB, leaseMs);
  const { sessionId } = await ca.call('session/create', {});
  await cb.call('session/attach', { sessionId });
  // Input needs attaching, on whichever worker it is sent (issue 20, item 2).
  if (inputOn === 'a') await ca.call('session/attach', { sessionId });
  await (inputOn === 'a' ? ca : cb).call('session/input', { sessionId, text: 'do the work' });
  await cb.waitFor(isEntry('tool/dispatch'), 20_000, 'the dispatch, relayed to B');
  for (let i = 0; !existsSync(join(ws, 'marker')) && i < 200; i++) await new Promise((r) => setTimeout(r, 25));
  a.proc.kill('SIGKILL');
  const killed = Date.now();
  await a.exit;
  writeFileSync(join(ws, 'go'), '');
  return { ws, a, ca, cb, sessionId, killed, leaseMs };
}

describeWithPostgres('two bridle serve workers on one Postgres', (db) => {
  it.runIf(cliBuilt)('an attach on worker B sees every entry of a turn run on worker A in order, and its live text', async () => {
    const url = await db.fresh();
    const script = { responses: [{ text: 'Writing it.', toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'from A\n' } }] }, { text: 'Done on A.' }] };
    const { ws, ca, cb } = await twoWorkers(url, script, { responses: [] }, 15_000);
    const { sessionId } = await ca.call('session/create', {});
    await ca.call('session/attach', { sessionId });
    expect(await cb.call('session/attach', { sessionId })).toMatchObject({ sessionId, fromSeq: 1 });
    // Sent on B, run on A: B's answer comes once A has logged the input.
    const { seq } = await cb.call('session/input', { sessionId, text: 'write out.txt' });
    await cb.waitFor(isEntry('checkpoint', seq), 20_000, 'the turn to end on B');
    await ca.waitFor(isEntry('checkpoint', seq), 20_000, 'the turn to end on A');
    const stored = (await createPostgresSessionStore({ url }).tail(sessionId))!.map((l) => JSON.parse(l));
    const onB = cb.entries(sessionId);
    expect(onB.map((e) => e.seq)).toEqual(onB.map((_e, i) => i + 1));
    expect(onB).toEqual(stored.slice(0, onB.length));
    expect(ca.entries(sessionId).slice(0, onB.length)).toEqual(onB);
    expect(onB.find((e) => e.seq === seq)).toMatchObject({ kind: 'session/input', text: 'write out.txt' });
    expect(onB.filter((e) => e.kind === 'turn/end')).toEqual([expect.objectContaining({ reason: 'completed' })]);
    expect(readFileSync(join(ws, 'out.txt'), 'utf8')).toBe('from A\n');
    // The live text A's model streamed reached B's client too (ADR 0035), whole, for each step.
    const liveText = (step: string) => cb.notifications('session/delta', sessionId).filter((d) => d.step === step && d.chunk.type === 'text-delta').map((d) => d.chunk.text).join('');
    await cb.waitFor(() => liveText('t1.s2') === 'Done on A.', 10_000, 'the live text of A\'s second step on B');
    expect(liveText('t1.s1')).toBe('Writing it.');
    // A method only the runner serves is refused on B, naming why.
    expect((await cb.request('session/snapshot', { sessionId })).error).toMatchObject({ code: -32008, data: { reason: 'SESSION_ELSEWHERE' } });
    expect((await cb.request('session/close', { sessionId })).error).toMatchObject({ code: -32008, data: { reason: 'SESSION_ELSEWHERE' } });
  }, 60_000);

  it.runIf(cliBuilt)('two workers and a SIGKILL of the owner during a non-idempotent bash call: the other takes over, the log verifies, the marker file shows one run', async () => {
    const url = await db.fresh();
    const { ws, a, cb, sessionId, killed, leaseMs } = await ownerKilledMidBash(url, { responses: [{ text: 'taken over on B' }] }, 'b');
    // Forwarded while A's lease still runs; answered once B has taken the session over and logged it itself.
    const { seq } = await cb.call('session/input', { sessionId, text: 'and now?' });
    const tookMs = Date.now() - killed;
    await cb.waitFor(isEntry('checkpoint', seq), 20_000, 'the turn B runs to end');
    expect(tookMs).toBeLessThan(leaseMs + 4000);
    const got = cb.entries(sessionId);
    expect(got.map((e) => e.seq)).toEqual(got.map((_e, i) => i + 1));
    expect(verifyLog(got).violations).toEqual([]);
    const takeover = got.find((e) => e.kind === 'session/takeover');
    expect(takeover).toMatchObject({ stale: { pid: a.proc.pid } });
    expect(got.filter((e) => e.kind === 'tool/result')).toEqual([expect.objectContaining({ code: 'TOOL_OUTCOME_UNKNOWN' })]);
    expect(got.filter((e) => e.kind === 'session/input').map((e) => e.text)).toEqual(['do the work', 'and now?']);
    expect(got.filter((e) => e.kind === 'turn/end').map((e) => e.reason)).toEqual(['interrupted', 'completed']);
    expect(got.filter((e) => e.kind === 'assistant/message').at(-1)).toMatchObject({ blocks: [{ type: 'text', text: 'taken over on B' }] });
    expect(readFileSync(join(ws, 'marker'), 'utf8')).toBe('ran\n');
    const replay = spawnSync(process.execPath, [CLI, 'replay', sessionId, '--store', url], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: process.env.HOME, BRIDLE_HOME: join(root!, 'home-c') } });
    expect(replay.status, replay.stderr).toBe(0);
  }, 60_000);

  it.runIf(cliBuilt)('a client watching on worker B, sending nothing: B takes the session over once the killed owner\'s lease has expired', async () => {
    const { ws, a, cb, sessionId, killed, leaseMs } = await ownerKilledMidBash(await db.fresh(), { responses: [] }, 'a');
    await cb.waitFor(isEntry('session/takeover'), leaseMs + 5000, 'B to take the session over');
    // The lease's expiry, then B's check of the sessions it relays (every 2 s).
    expect(Date.now() - killed).toBeLessThan(leaseMs + 3500);
    await cb.waitFor(isEntry('turn/end'), 5000, 'the repair to close the turn');
    const got = cb.entries(sessionId);
    expect(got.map((e) => e.seq)).toEqual(got.map((_e, i) => i + 1));
    expect(got.filter((e) => e.kind === 'tool/result')).toEqual([expect.objectContaining({ code: 'TOOL_OUTCOME_UNKNOWN' })]);
    expect(readFileSync(join(ws, 'marker'), 'utf8')).toBe('ran\n');
    expect((await cb.call('session/snapshot', { sessionId })).value).not.toBe('elsewhere');
  }, 60_000);

  it.runIf(cliBuilt)('a client on worker B answers an approval of a session worker A runs: asked on B, the call runs once on A', async () => {
    const url = await db.fresh();
    const ask = { responses: [{ text: 'writing the marker', toolCalls: [{ name: 'bash', arguments: { command: 'echo ran >> marker' } }] }, { text: 'marker written' }] };
    const { ws, b, ca, cb, token } = await twoWorkers(url, ask, { responses: [] }, 15_000, 'ask');
    const { sessionId } = await ca.call('session/create', {});
    await ca.call('session/attach', { sessionId });
    await cb.call('session/attach', { sessionId });
    await cb.call('session/input', { sessionId, text: 'write the marker' });
    const onA = await ca.waitFor((m) => m.method === 'approval/request', 15_000, 'the question on A');
    const onB = await cb.waitFor((m) => m.method === 'approval/request', 15_000, 'the question relayed to B');
    expect(onB.params).toEqual(onA.params);
    expect(onB.params).toMatchObject({ sessionId, tool: 'bash', args: { command: 'echo ran >> marker' }, presented: expect.stringContaining('echo ran >> marker') });
    // A client that attaches on B while the question is open is asked too; one not attached may not answer.
    const [late, stranger] = await Promise.all([RpcClient.connect(b.url, { token }), RpcClient.connect(b.url, { token })]);
    clients.push(late, stranger);
    await late.call('session/attach', { sessionId });
    expect((await late.waitFor((m) => m.method === 'approval/request', 10_000, 'the question, to a late client')).params).toEqual(onA.params);
    expect((await stranger.request('approval/respond', { sessionId, callId: onB.params.callId, outcome: 'allowed-once' })).error).toMatchObject({ code: -32004, data: { reason: 'NOT_ATTACHED' } });
    expect(existsSync(join(ws, 'marker'))).toBe(false);

    expect(await cb.call('approval/respond', { sessionId, callId: onB.params.callId, outcome: 'allowed-once' })).toEqual({ accepted: true });
    // Answered once A has logged the decision.
    const stored = (await createPostgresSessionStore({ url }).tail(sessionId))!.map((l) => JSON.parse(l));
    expect(stored.filter((e) => e.kind === 'approval/decided')).toEqual([expect.objectContaining({ callId: onB.params.callId, outcome: 'allowed-once', by: expect.stringMatching(/^ws:/) })]);
    // A second answer is the owner's refusal, as a local client's would be.
    expect((await late.request('approval/respond', { sessionId, callId: onB.params.callId, outcome: 'rejected' })).error).toMatchObject({ code: -32002, data: { reason: 'NOT_PENDING' } });
    await cb.waitFor(isEntry('turn/end'), 15_000, 'the turn to end on B');
    expect(readFileSync(join(ws, 'marker'), 'utf8')).toBe('ran\n');
    const got = cb.entries(sessionId);
    expect(verifyLog(got).violations).toEqual([]);
    expect(got.filter((e) => e.kind === 'tool/result')).toEqual([expect.objectContaining({ status: 'ok' })]);
    expect(got.filter((e) => e.kind === 'turn/end')).toEqual([expect.objectContaining({ reason: 'completed' })]);
    // Nothing more is asked once it is decided, here or of a client attaching now.
    const after = await RpcClient.connect(b.url, { token });
    clients.push(after);
    await after.call('session/attach', { sessionId });
    await after.waitFor(isEntry('turn/end'), 10_000, 'the backlog, to a client attaching after');
    await new Promise((r) => setTimeout(r, 300));
    expect(after.notifications('approval/request')).toEqual([]);
    expect(cb.notifications('approval/request')).toHaveLength(1);
    expect(late.notifications('approval/request')).toHaveLength(1);
  }, 60_000);

  it.runIf(cliBuilt)('a cancel sent on worker B ends the turn running on worker A', async () => {
    const url = await db.fresh();
    const slow = { responses: [{ text: 'working', toolCalls: [{ name: 'bash', arguments: { command: 'echo ran >> marker; sleep 30' } }] }] };
    const { ws, ca, cb } = await twoWorkers(url, slow, { responses: [] }, 15_000);
    const { sessionId } = await ca.call('session/create', {});
    await cb.call('session/attach', { sessionId });
    await cb.call('session/input', { sessionId, text: 'do the work' });
    await cb.waitFor(isEntry('tool/dispatch'), 20_000, 'the dispatch, relayed to B');
    for (let i = 0; !existsSync(join(ws, 'marker')) && i < 200; i++) await new Promise((r) => setTimeout(r, 25));
    const sent = Date.now();
    expect(await cb.call('session/cancel', { sessionId })).toEqual({ requested: true });
    // Answered once A has logged the cancel.
    const stored = (await createPostgresSessionStore({ url }).tail(sessionId))!.map((l) => JSON.parse(l));
    expect(stored.filter((e) => e.kind === 'session/cancel')).toEqual([expect.objectContaining({ by: 'client' })]);
    const end = await cb.waitFor(isEntry('turn/end'), 10_000, 'the turn to end');
    expect(end.params.entry.reason).toBe('aborted');
    expect(Date.now() - sent).toBeLessThan(5000);
    const got = cb.entries(sessionId);
    expect(got.map((e) => e.seq)).toEqual(got.map((_e, i) => i + 1));
    expect(verifyLog(got).violations).toEqual([]);
    expect(got.filter((e) => e.kind === 'tool/result')).toEqual([expect.objectContaining({ status: 'aborted' })]);
    // Nothing runs now: a cancel is answered, and nothing is logged for it.
    expect(await cb.call('session/cancel', { sessionId })).toEqual({ requested: true });
    const again = (await createPostgresSessionStore({ url }).tail(sessionId))!.map((l) => JSON.parse(l));
    expect(again.filter((e) => e.kind === 'session/cancel')).toHaveLength(1);
    expect(readFileSync(join(ws, 'marker'), 'utf8')).toBe('ran\n');
  }, 60_000);
});
