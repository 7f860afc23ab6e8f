/**
 * A restarted `bridle serve` serves the sessions its predecessor left (issue
 * #11 item 5): a server SIGKILLed while a non-idempotent bash call runs; a
 * new server on the same home (JSONL) or the same database (Postgres) is
 * asked for the session by `session/attach`, takes the writer's claim over,
 * repairs the log as `bridle resume` would (the call closed as outcome
 * unknown, never run again), and a `session/input` then gets a turn.
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyLog } from '../../log/verify.js';
import { describeWithPostgres } from '../helpers/postgres.js';
import { RpcClient } from '../helpers/rpc-client.js';
import { startServeProcess, useServeWorld } from '../helpers/serve-process.js';
import { cliBuilt } from '../fault/cli-world.js';

const SLOW = { responses: [{ text: 'working', toolCalls: [{ name: 'bash', arguments: { command: 'echo ran >> marker; for i in $(seq 400); do [ -f go ] && break; sleep 0.05; done' } }] }] };
const AFTER = { responses: [{ text: 'served again' }] };

const world = useServeWorld();
const { servers, clients } = world;
let root: string;

/** Attaches to a session a killed server held: its lease is refused, naming it, until it expires (then taken over), so a client retries. */
async function attachAfterKill(c: RpcClient, sessionId: string, leaseMs: number): Promise<unknown> {
  const killedAt = Date.now();
  let attached = await c.request('session/attach', { sessionId });
  while (attached.error && Date.now() - killedAt < leaseMs + 3000) {
    expect(attached.error).toMatchObject({ data: { reason: 'SESSION_LOCKED' } });
    await new Promise((r) => setTimeout(r, 100));
    attached = await c.request('session/attach', { sessionId });
  }
  return attached.result;
}

async function restartAfterKill(store: string[], leaseMs = 0): Promise<void> {
  root = world.tempDir('bridle-serve-restart-');
  const ws = join(root, 'ws');
  mkdirSync(ws);
  writeFileSync(join(root, 'slow.json'), JSON.stringify(SLOW));
  writeFileSync(join(root, 'after.json'), JSON.stringify(AFTER));
  const env = { BRIDLE_HOME: join(root, 'home') };
  const common = [...store, '--cwd', ws, '--approval', 'auto', '--sandbox', 'off'];
  const a = await startServeProcess([...common, '--model', `scripted:${join(root, 'slow.json')}`], env);
  servers.push(a);
  const ca = await RpcClient.connect(a.url, { token: a.token });
  clients.push(ca);
  const { sessionId } = await ca.call('session/create', {});
  await ca.call('session/attach', { sessionId });
  await ca.call('session/input', { sessionId, text: 'do the work' });
  await ca.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'tool/dispatch', 15_000, 'the dispatch');
  for (let i = 0; !existsSync(join(ws, 'marker')) && i < 200; i++) await new Promise((r) => setTimeout(r, 25));
  a.proc.kill('SIGKILL');
  await a.exit;
  // The bash call is free to finish now: nothing may run it again.
  writeFileSync(join(ws, 'go'), '');

  const b = await startServeProcess([...common, '--model', `scripted:${join(root, 'after.json')}`], env);
  servers.push(b);
  const cb = await RpcClient.connect(b.url, { token: b.token });
  clients.push(cb);
  expect(await attachAfterKill(cb, sessionId, leaseMs)).toMatchObject({ sessionId, fromSeq: 1 });
  const seq = (await cb.call('session/input', { sessionId, text: 'and now?' })).seq as number;
  expect(seq).toBeGreaterThan(0);
  await cb.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'turn/end' && m.params.entry.seq > seq, 15_000, 'the new turn to end');
  await cb.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'checkpoint' && m.params.entry.seq > seq, 15_000, 'the checkpoint after it');
  const got = cb.entries(sessionId);
  // Every entry once, in order, from the predecessor's first on.
  expect(got.map((e) => e.seq)).toEqual(got.map((_e, i) => i + 1));
  expect(verifyLog(got).violations).toEqual([]);
  const kinds = got.map((e) => e.kind);
  expect(kinds).toContain('session/takeover');
  expect(got.filter((e) => e.kind === 'tool/result')).toEqual([expect.objectContaining({ code: 'TOOL_OUTCOME_UNKNOWN' })]);
  const turns = got.filter((e) => e.kind === 'turn/end');
  expect(turns.map((t) => (t as { reason: string }).reason)).toEqual(['interrupted', 'completed']);
  expect(got.filter((e) => e.kind === 'assistant/message').at(-1)).toMatchObject({ blocks: [{ type: 'text', text: 'served again' }] });
  expect(readFileSync(join(ws, 'marker'), 'utf8')).toBe('ran\n');
  expect(await b.stop(), b.stderr()).toBe(0);
}

describe.runIf(cliBuilt)('bridle serve after a restart (JSONL)', () => {
  it('a restarted server serves the sessions its predecessor left: attach and input after a SIGKILL give a turn, the call is not run again', async () => {
    await restartAfterKill([]);
  }, 60_000);
});

describeWithPostgres('bridle serve after a restart (Postgres)', (db) => {
  it.runIf(cliBuilt)('a restarted server serves the sessions its predecessor left: attach and input after a SIGKILL give a turn, the call is not run again', async () => {
    await restartAfterKill(['--store', await db.fresh(), '--lease-ms', '500'], 500);
  }, 60_000);
});

/**
 * Issue #11's done-when: an approval pending at a server kill is asked again
 * after restart and the call runs once on approval — through real `bridle serve`
 * processes: the first is SIGKILLed while its client has the question and has
 * not answered; the second reopens the session on attach, asks its client the
 * same question, and runs the call once when allowed.
 */
async function approvalAfterKill(store: string[], leaseMs = 0): Promise<void> {
  root = world.tempDir('bridle-serve-approval-');
  const ws = join(root, 'ws');
  mkdirSync(ws);
  const ask = { responses: [{ text: 'writing the marker', toolCalls: [{ name: 'bash', arguments: { command: 'echo ran >> marker' } }] }] };
  writeFileSync(join(root, 'ask.json'), JSON.stringify(ask));
  writeFileSync(join(root, 'after.json'), JSON.stringify({ responses: [{ text: 'marker written' }] }));
  const env = { BRIDLE_HOME: join(root, 'home') };
  const common = [...store, '--cwd', ws, '--approval', 'ask', '--sandbox', 'off'];
  const a = await startServeProcess([...common, '--model', `scripted:${join(root, 'ask.json')}`], env);
  servers.push(a);
  const ca = await RpcClient.connect(a.url, { token: a.token });
  clients.push(ca);
  const { sessionId } = await ca.call('session/create', {});
  await ca.call('session/attach', { sessionId });
  await ca.call('session/input', { sessionId, text: 'write the marker' });
  const first = await ca.waitFor((m) => m.method === 'approval/request', 15_000, 'the question');
  // The question is durable in the log before it is sent (approval/asked): kill the server while it waits.
  a.proc.kill('SIGKILL');
  await a.exit;
  expect(existsSync(join(ws, 'marker'))).toBe(false);

  const b = await startServeProcess([...common, '--model', `scripted:${join(root, 'after.json')}`], env);
  servers.push(b);
  const cb = await RpcClient.connect(b.url, { token: b.token });
  clients.push(cb);
  expect(await attachAfterKill(cb, sessionId, leaseMs)).toMatchObject({ sessionId });
  const again = await cb.waitFor((m) => m.method === 'approval/request', 15_000, 'the same question, asked again');
  expect(again.params).toMatchObject({ sessionId, callId: first.params.callId, tool: 'bash' });
  await cb.call('approval/respond', { sessionId, callId: again.params.callId, outcome: 'allowed-once' });
  await cb.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'turn/end', 15_000, 'the turn to end');
  expect(readFileSync(join(ws, 'marker'), 'utf8')).toBe('ran\n');
  const got = cb.entries(sessionId);
  expect(verifyLog(got).violations).toEqual([]);
  expect(got.filter((e) => e.kind === 'approval/asked')).toHaveLength(2);
  expect(got.filter((e) => e.kind === 'approval/decided')).toEqual([expect.objectContaining({ outcome: 'allowed-once' })]);
  expect(got.filter((e) => e.kind === 'tool/result')).toEqual([expect.objectContaining({ status: 'ok' })]);
  expect(got.filter((e) => e.kind === 'turn/end')).toEqual([expect.objectContaining({ reason: 'completed' })]);
  expect(await b.stop(), b.stderr()).toBe(0);
}

describe.runIf(cliBuilt)('an approval pending at a server kill (JSONL)', () => {
  it('an approval pending at a server kill is asked again after restart and the call runs once on approval', async () => {
    await approvalAfterKill([]);
  }, 60_000);
});

describeWithPostgres('an approval pending at a server kill (Postgres)', (db) => {
  it.runIf(cliBuilt)('an approval pending at a server kill is asked again after restart and the call runs once on approval', async () => {
    await approvalAfterKill(['--store', await db.fresh(), '--lease-ms', '500'], 500);
  }, 60_000);
});
