/**
 * `bridle run` as a user runs it, against a local server speaking the OpenAI
 * wire format, through the real openai SDK: a multi-step turn with parallel
 * calls and an unknown tool among them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toWireMessages } from '../../adapters/model/openai-wire.js';
import { deriveMessages } from '../../log/derive-messages.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import { errorReply, type OpenAIServer, startOpenAIServer, streamReply, textReply, toolCallReply } from '../helpers/openai-sse-server.js';
import { textChunks, usageChunk } from '../helpers/openai-chunks.js';
import { readSessionLog, tempWorld } from '../helpers/cli-world.js';
import { runCli } from '../helpers/cli.js';

let srv: OpenAIServer;
let home: string;
let ws: string;
beforeEach(async () => {
  srv = await startOpenAIServer();
  ({ home, ws } = tempWorld('bridle-e2e-'));
  writeFileSync(join(ws, 'notes.txt'), 'alpha\nbeta\n');
});
afterEach(() => srv.close());

const readLog = (): Entry[] => readSessionLog(home);

describe('bridle run against an OpenAI-compatible server', () => {
  it('drives a multi-step turn with parallel calls and an unknown tool; the log satisfies I1–I4, I7, I8', async () => {
    srv.enqueue(
      toolCallReply([
        { id: 'a', name: 'read_file', arguments: '{"path":"notes.txt"}' },
        { id: 'b', name: 'frobnicate', arguments: '{}' },
        { id: 'c', name: 'list_dir', arguments: '{}' },
      ]),
      errorReply(500, 'overloaded'),
      toolCallReply([{ id: 'd', name: 'write_file', arguments: '{"path":"out.txt","content":"done\\n"}' }]),
      textReply('All done.'),
    );
    const r = await runCli(['run', '--base-url', srv.url, '--model', 'm', '--cwd', ws, '--approval', 'auto', 'summarize notes'], { env: { BRIDLE_HOME: home } });
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/); // no stack traces
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('All done.');
    expect(readFileSync(join(ws, 'out.txt'), 'utf8')).toBe('done\n');

    const log = readLog();
    const results = log.filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result');
    expect(results.find((x) => x.toolCallId === 'b')).toMatchObject({ status: 'rejected', code: 'UNKNOWN_TOOL' });
    expect(log.filter((e) => e.kind === 'tool/dispatch').map((e) => (e as EntryOf<'tool/dispatch'>).name).sort()).toEqual(['list_dir', 'read_file', 'write_file']);
    // I2 and I3.
    for (const c of log.filter((e): e is EntryOf<'tool/call'> => e.kind === 'tool/call')) {
      expect(results.filter((x) => x.callId === c.callId)).toHaveLength(1);
    }
    expect(log.filter((e) => e.kind === 'turn/start')).toHaveLength(1);
    expect(log.filter((e) => e.kind === 'turn/end')).toMatchObject([{ reason: 'completed', steps: 3 }]);
    // The 500 was retried and logged.
    expect(log.filter((e) => e.kind === 'model/retry')).toMatchObject([{ code: 'SERVER' }]);
    // I1: what reached the wire is the log's projection at each step/start.
    const starts = log.map((e, i) => (e.kind === 'step/start' ? i : -1)).filter((i) => i >= 0);
    const modelRequests = srv.requests.filter((q) => q.path.endsWith('/chat/completions'));
    expect(modelRequests).toHaveLength(4);
    const byStep = [0, 1, 1, 2].map((s) => starts[s]!);
    modelRequests.forEach((q, i) => {
      const system = (log.find((e) => e.kind === 'request/header') as EntryOf<'request/header'>).system;
      expect(q.body.messages).toEqual(JSON.parse(JSON.stringify(toWireMessages({ system, messages: deriveMessages(log.slice(0, byStep[i]! + 1)) }))));
      // I7: only name, description, parameters.
      for (const t of q.body.tools) expect(Object.keys(t.function).sort()).toEqual(['description', 'name', 'parameters']);
    });
  });

  it('a stream cut off before any finish is TRANSPORT, retried, and never taken for success (I8)', async () => {
    const cut = streamReply([...textChunks('half an ans').slice(0, -1)], { done: false });
    srv.enqueue(cut, cut, cut, cut);
    const r = await runCli(['run', '--base-url', srv.url, '--model', 'm', '--cwd', ws, 'hi'], { env: { BRIDLE_HOME: home } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the turn failed: TRANSPORT/);
    const log = readLog();
    expect(log.filter((e) => e.kind === 'model/retry')).toHaveLength(3);
    expect(log.find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'error', code: 'TRANSPORT' });
    expect(usageChunk).toBeDefined();
  });

  it('bad flags, a missing key and an unreachable server each get one clear line, no stack trace', async () => {
    const bad = await runCli(['run', '--approval', 'sometimes', '--model', 'm', 'x'], { env: { BRIDLE_HOME: home } });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe('bridle: --approval must be never, ask or auto (got "sometimes")');
    const nokey = await runCli(['run', '--base-url', 'https://api.example.invalid/v1', '--model', 'm', 'x'], { env: { BRIDLE_HOME: home } });
    expect(nokey.code).toBe(1);
    expect(nokey.stderr).toMatch(/^bridle: OPENAI_API_KEY is not set/m);
    await srv.close();
    const down = await runCli(['run', '--base-url', srv.url, '--model', 'm', '--cwd', ws, 'x'], { env: { BRIDLE_HOME: home } });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/the turn failed: TRANSPORT/);
    expect(down.stderr).not.toMatch(/\n\s+at /);
    srv = await startOpenAIServer();
  });
});
