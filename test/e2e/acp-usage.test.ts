/**
 * `usage_update` (ACP 2026): after each step's usage, `bridle acp` tells the
 * client the context used and what the session's whole subagent tree has cost
 * so far — the figure `bridle cost` prints for the same logs. Driven by the
 * official SDK's client against the built CLI, the model a local fake of
 * OpenAI's wire (a priced model id) or a scripted model (which costs nothing).
 */
import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { methods } from '@agentclientprotocol/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recordingClient, spawnAcp, updatesOf, type AcpChild } from '../helpers/acp.js';
import { runCli } from '../helpers/cli.js';
import { type OpenAIServer, startOpenAIServer, streamReply } from '../helpers/openai-sse-server.js';
import { textChunks, toolCallChunks, usageChunk } from '../helpers/openai-chunks.js';
import { tempDir } from '../helpers/temp.js';

let root: string;
let home: string;
let ws: string;
let srv: OpenAIServer | undefined;
const children: AcpChild[] = [];
beforeEach(() => {
  root = realpathSync(tempDir('bridle-acp-usage-'));
  home = join(root, 'home');
  ws = join(root, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'README.md'), '# hi\n');
});
afterEach(async () => {
  for (const c of children.splice(0)) c.child.kill('SIGKILL');
  await srv?.close();
  srv = undefined;
  rmSync(root, { recursive: true, force: true });
});

function acp(args: string[]): AcpChild {
  const c = spawnAcp(['--cwd', ws, '--sandbox', 'off', '--approval', 'auto', ...args], { BRIDLE_HOME: home });
  children.push(c);
  return c;
}

async function oneTurn(c: AcpChild, prompt: string) {
  const { app, record } = recordingClient();
  const { sessionId, res } = await app.connectWith(c.stream, async (ctx) => {
    await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'sdk-client', version: '1' } });
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    return { sessionId, res: await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: prompt }] }) };
  });
  return { sessionId, res, usage: updatesOf(record, 'usage_update') };
}

async function costJson(id: string): Promise<{ total: { usd: number; tokens: { input: number } }; sessions: unknown[] }> {
  const r = await runCli(['cost', id, '--json'], { env: { BRIDLE_HOME: home } });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

describe('bridle acp sends usage_update', () => {
  it('after each step, with the cumulative cost of the session and its subagent equal to bridle cost of the logs', async () => {
    srv = await startOpenAIServer();
    const usage = (prompt_tokens: number, completion_tokens: number, cached_tokens?: number) => usageChunk({ prompt_tokens, completion_tokens, ...(cached_tokens ? { cached_tokens } : {}) });
    // In request order: the parent delegates, the child answers, the parent answers.
    srv.enqueue(
      streamReply([...toolCallChunks([{ name: 'delegate', arguments: JSON.stringify({ task: 'What files are there?' }) }]), usage(1000, 100)]),
      streamReply([...textChunks('README.md'), usage(2000, 50, 1500)]),
      streamReply([...textChunks('The subagent found README.md.'), usage(1200, 30, 1000)]),
    );
    const c = acp(['--base-url', srv.url, '--model', 'gpt-5', '--max-depth', '1']);
    const { sessionId, res, usage: updates } = await oneTurn(c, 'look around');
    expect(res).toEqual({ stopReason: 'end_turn' });
    expect(await c.end()).toBe(0);
    // The parent's two steps and the subagent's end; the last one holds all three steps.
    expect(updates.length).toBeGreaterThanOrEqual(3);
    const last = updates[updates.length - 1]!;
    const cost = await costJson(sessionId);
    expect(cost.sessions).toHaveLength(2);
    expect(last.cost).toEqual({ amount: cost.total.usd, currency: 'USD' });
    // gpt-5's list prices ($1.25 in, $0.125 cached, $10 out per million), over the tree.
    expect(last.cost!.amount).toBeCloseTo((1000 * 1.25 + 100 * 10 + (500 * 1.25 + 1500 * 0.125 + 50 * 10) + (200 * 1.25 + 1000 * 0.125 + 30 * 10)) / 1e6, 12);
    expect(last.used).toBe(1230);
    expect(last.size).toBeGreaterThan(0);
    expect(last._meta).toMatchObject({ bridle: { scripted: false, sessions: 2, tokens: { input: cost.total.tokens.input } } });
    // Cumulative: never less than the one before.
    for (let i = 1; i < updates.length; i++) expect(updates[i]!.cost!.amount).toBeGreaterThanOrEqual(updates[i - 1]!.cost!.amount);
  });

  it('a scripted model: its usage is labelled scripted and costs nothing', async () => {
    const file = join(root, 'script.json');
    writeFileSync(file, JSON.stringify({ responses: [{ text: 'hello', usage: { inputTokens: 40, outputTokens: 2 } }] }));
    const c = acp(['--model', `scripted:${file}`]);
    const { sessionId, usage } = await oneTurn(c, 'hi');
    expect(await c.end()).toBe(0);
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ used: 42, cost: { amount: 0, currency: 'USD' }, _meta: { bridle: { scripted: true } } });
    expect((await costJson(sessionId)).total.usd).toBe(0);
  });
});
