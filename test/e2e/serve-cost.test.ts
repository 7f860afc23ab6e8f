/**
 * `session/cost` through `bridle serve` (the built CLI): what a session and
 * its subagent cost, the report `bridle cost --json` prints for the logs it
 * left — the children read from the store, priced with the prices row. The
 * model is a local fake of OpenAI's wire under a priced model id.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { type OpenAIServer, startOpenAIServer, streamReply } from '../helpers/openai-sse-server.js';
import { textChunks, toolCallChunks, usageChunk } from '../helpers/openai-chunks.js';
import { RpcClient } from '../helpers/rpc-client.js';
import { startServeProcess, useServeWorld } from '../helpers/serve-process.js';

const world = useServeWorld();
let srv: OpenAIServer | undefined;
afterEach(async () => {
  await srv?.close();
  srv = undefined;
});

describe('bridle serve: session/cost', () => {
  it('after a turn that delegated, the session and its subagent cost what bridle cost --json says of their logs', async () => {
    const root = world.tempDir('bridle-serve-cost-');
    const home = join(root, 'home');
    const ws = join(root, 'ws');
    mkdirSync(ws);
    writeFileSync(join(ws, 'README.md'), '# hi\n');
    srv = await startOpenAIServer();
    srv.enqueue(
      streamReply([...toolCallChunks([{ name: 'delegate', arguments: JSON.stringify({ task: 'What files are there?' }) }]), usageChunk({ prompt_tokens: 1000, completion_tokens: 100 })]),
      streamReply([...textChunks('README.md'), usageChunk({ prompt_tokens: 2000, completion_tokens: 50, cached_tokens: 1500 })]),
      streamReply([...textChunks('The subagent found README.md.'), usageChunk({ prompt_tokens: 1200, completion_tokens: 30 })]),
    );
    const s = await startServeProcess(['--cwd', ws, '--sandbox', 'off', '--approval', 'auto', '--max-depth', '1', '--base-url', srv.url, '--model', 'gpt-5'], { BRIDLE_HOME: home });
    world.servers.push(s);
    const client = await RpcClient.connect(s.url, { token: s.token });
    world.clients.push(client);
    const { sessionId } = await client.call('session/create', {});
    await client.call('session/attach', { sessionId });
    await client.call('session/input', { sessionId, text: 'look around' });
    await client.waitFor((m) => m.method === 'session/entry' && m.params?.entry?.kind === 'turn/end', 20_000, 'the turn to end');
    const { cost } = await client.call('session/cost', { sessionId });
    const r = await runCli(['cost', sessionId, '--json'], { env: { BRIDLE_HOME: home } });
    expect(r.code, r.stderr).toBe(0);
    expect(cost).toEqual(JSON.parse(r.stdout));
    expect(cost.sessions).toHaveLength(2);
    expect(cost.total.usd).toBeCloseTo((1000 * 1.25 + 100 * 10 + (500 * 1.25 + 1500 * 0.125 + 50 * 10) + 1200 * 1.25 + 30 * 10) / 1e6, 12);
  });
});
