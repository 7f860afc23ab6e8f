/**
 * Nothing acknowledged is lost (ADR 0021), as a user would meet it: a
 * followup sent over WebSocket while a turn runs, acknowledged, then the
 * server killed with SIGKILL; `bridle resume` runs that followup as exactly
 * one turn, and the log verifies and replays through the machines.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { parseLog } from '../../log/parse.js';
import type { EntryOf } from '../../log/entries.js';
import { CLI } from '../helpers/cli.js';
import { RpcClient } from '../helpers/rpc-client.js';
import { startServeProcess } from '../helpers/serve-process.js';
import { createWorld, type World } from './cli-world.js';

let w: World | undefined;
let child: ChildProcessWithoutNullStreams | undefined;
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
  w?.cleanup();
  w = undefined;
});

/** `bridle serve` on `model` in the world, approvals auto, no sandbox; its process is `child`, SIGKILLed after the test. */
async function serve(world: World, model: string): Promise<{ url: string; token: string }> {
  const s = await startServeProcess(['--model', model, '--cwd', world.workspace, '--approval', 'auto', '--sandbox', 'off'], { BRIDLE_HOME: world.home });
  child = s.proc;
  return s;
}

const cli = (world: World, args: string[]) =>
  new Promise<{ code: number | null; err: string }>((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, BRIDLE_HOME: world.home } });
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    p.on('close', (code) => resolve({ code, err }));
  });

it('over WebSocket, a followup sent during a running turn and acknowledged, then a SIGKILL of the server, then a resume, gives exactly one turn for that followup', async () => {
  w = createWorld();
  // The first turn runs a command that outlasts the server; the followup arrives while it runs.
  const first = w.script('first.json', { responses: [{ text: 'Working on it.', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 30' } }] }] });
  const s = await serve(w, `scripted:${first}`);
  const c = await RpcClient.connect(s.url, { token: s.token });
  const { sessionId } = await c.call('session/create', {});
  await c.call('session/attach', { sessionId });
  await c.call('session/input', { sessionId, text: 'start the long job' });
  await c.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'tool/dispatch', 10_000, 'the long command to start');
  const ack = (await c.call('session/input', { sessionId, text: 'then write the summary' })) as { accepted: true; seq: number };
  expect(ack).toMatchObject({ accepted: true, seq: expect.any(Number) });
  // Acknowledged means durable: the entry is on disk before the answer came.
  const log = join(w.home, 'sessions', `${sessionId}.jsonl`);
  expect(parseLog(readFileSync(log, 'utf8')).entries.find((e) => e.seq === ack.seq)).toMatchObject({ kind: 'session/input', mode: 'followup', text: 'then write the summary' });
  child!.kill('SIGKILL');
  c.close();
  await new Promise((r) => child!.once('close', r));
  child = undefined;

  const second = w.script('second.json', { responses: [{ text: 'Summary written.' }] });
  const resumed = await cli(w, ['resume', sessionId, '--model', `scripted:${second}`]);
  expect(resumed.err).toMatch(/queued: 1 input the session received and never ran, now run in order/);
  expect(resumed.code).toBe(0);

  const entries = parseLog(readFileSync(log, 'utf8')).entries;
  const turns = entries.filter((e): e is EntryOf<'turn/start'> => e.kind === 'turn/start');
  expect(turns.filter((t) => t.from === ack.seq)).toHaveLength(1);
  expect(turns.filter((t) => t.input === 'then write the summary')).toHaveLength(1);
  const end = entries.find((e): e is EntryOf<'turn/end'> => e.kind === 'turn/end' && e.turn === turns.find((t) => t.from === ack.seq)!.turn);
  expect(end).toMatchObject({ reason: 'completed' });
  // The killed command's outcome is unknown, and nothing ran it again.
  expect(entries.find((e) => e.kind === 'tool/result' && e.code === 'TOOL_OUTCOME_UNKNOWN')).toBeDefined();
  expect((await cli(w, ['replay', log])).code).toBe(0);
  expect((await cli(w, ['replay', log, '--machines'])).code).toBe(0);
  // A second resume finds nothing queued: the followup ran once.
  const again = await cli(w, ['resume', sessionId]);
  expect(again.err).not.toMatch(/queued:/);
  expect(parseLog(readFileSync(log, 'utf8')).entries.filter((e) => e.kind === 'turn/start' && e.input === 'then write the summary')).toHaveLength(1);
}, 60_000);
