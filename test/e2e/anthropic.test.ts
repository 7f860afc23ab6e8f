/**
 * `bridle run --provider anthropic` as a user runs it, against a local server speaking the Messages API's
 * SSE through the real `@anthropic-ai/sdk`: a three-step tool turn with extended thinking. Each later
 * request carries the earlier steps' thinking blocks, signatures included, byte for byte as they streamed;
 * every request has at most four cache breakpoints and extends the one before; the log replays through the
 * machines byte for byte. A fake of the wire, not the live endpoint (not run live here).
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { raw, startOpenAIServer, type OpenAIServer } from '../helpers/openai-sse-server.js';
import { readSessionLog, tempWorld } from '../helpers/cli-world.js';
import { runCli } from '../helpers/cli.js';

let srv: OpenAIServer;
let home: string;
let ws: string;
beforeEach(async () => {
  srv = await startOpenAIServer();
  ({ home, ws } = tempWorld('bridle-anthropic-'));
  writeFileSync(join(ws, 'notes.txt'), 'alpha\nbeta\n');
});
afterEach(() => srv.close());

const frames = (events: object[]) => ({ type: 'stream' as const, done: false, chunks: events.map((e) => raw(`event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`)) });
/** One answer: a thinking block (streamed in two deltas, its signature in two), then a tool call or text. */
function answer(n: number, then: { tool: string; input: object } | { text: string }) {
  const events: object[] = [
    { type: 'message_start', message: { id: `msg_${n}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: [], stop_reason: null, usage: { input_tokens: 100 * n, cache_read_input_tokens: 90 * (n - 1), cache_creation_input_tokens: 10, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: `Step ${n}: ` } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'what next? “ünïcödé”' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: `Sig${n}/+=` } },
    { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'AAECAw==' } },
    { type: 'content_block_stop', index: 0 },
  ];
  if ('tool' in then) {
    events.push({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: `toolu_${n}`, name: then.tool, input: {} } });
    events.push({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: JSON.stringify(then.input) } });
  } else {
    events.push({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } });
    events.push({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: then.text } });
  }
  events.push({ type: 'content_block_stop', index: 1 });
  events.push({ type: 'message_delta', delta: { stop_reason: 'tool' in then ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 20, output_tokens_details: { thinking_tokens: 12 } } });
  events.push({ type: 'message_stop' });
  return frames(events);
}

interface Sent { messages: { role: string; content: Record<string, unknown>[] }[]; system?: unknown[]; tools?: unknown[]; thinking?: unknown }
const breakpoints = (b: Sent) => JSON.stringify(b).split('"cache_control"').length - 1;
const strip = (v: unknown) => JSON.parse(JSON.stringify(v), (k, x) => (k === 'cache_control' ? undefined : x));

describe('bridle run on Anthropic’s wire', () => {
  it('a three-step tool turn with thinking: each request carries the earlier thinking blocks as received; replay is byte for byte', async () => {
    srv.enqueue(answer(1, { tool: 'list_dir', input: {} }), answer(2, { tool: 'read_file', input: { path: 'notes.txt' } }), answer(3, { text: 'It holds alpha and beta.' }));
    const r = await runCli(['run', '--provider', 'anthropic', '--base-url', srv.url.replace(/\/v1$/, ''), '--model', 'claude-sonnet-4-5-20250929', '--thinking-budget', '2048', '--cwd', ws, '--approval', 'auto', 'what is in notes.txt?'], { env: { BRIDLE_HOME: home } });
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('It holds alpha and beta.');

    const sent = srv.requests.filter((q) => q.path === '/v1/messages').map((q) => q.body as Sent);
    expect(sent).toHaveLength(3);
    for (const b of sent) {
      expect(breakpoints(b)).toBeGreaterThan(0);
      expect(breakpoints(b)).toBeLessThanOrEqual(4);
      expect(b.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    }
    // The second request: the first step's thinking block, byte for byte as it streamed, first in its turn.
    const firstThinking = { type: 'thinking', thinking: 'Step 1: what next? “ünïcödé”', signature: 'Sig1/+=AAECAw==' };
    const assistant2 = sent[1]!.messages.find((m) => m.role === 'assistant')!;
    expect(JSON.stringify(assistant2.content[0])).toBe(JSON.stringify(firstThinking));
    expect(assistant2.content[1]).toMatchObject({ type: 'tool_use', id: 'toolu_1', name: 'list_dir' });
    const assistants3 = sent[2]!.messages.filter((m) => m.role === 'assistant');
    expect(assistants3.map((m) => m.content[0]!.signature)).toEqual(['Sig1/+=AAECAw==', 'Sig2/+=AAECAw==']);
    // Cache-stable: each request's messages begin with the one before's.
    for (let i = 1; i < sent.length; i++) {
      expect(strip(sent[i]!.messages).slice(0, sent[i - 1]!.messages.length)).toEqual(strip(sent[i - 1]!.messages));
      expect(sent[i]!.system).toEqual(sent[i - 1]!.system);
      expect(sent[i]!.tools).toEqual(sent[i - 1]!.tools);
    }

    const log = readSessionLog(home);
    const messages = log.filter((e) => e.kind === 'assistant/message');
    expect(messages).toHaveLength(3);
    expect(messages[0]).toMatchObject({ blocks: [{ type: 'reasoning', provider: 'anthropic', data: firstThinking }, { type: 'tool-call' }], usage: { inputTokens: 110, outputTokens: 20, cacheWriteTokens: 10, cachedTokens: 0, reasoningTokens: 12 } });
    const file = join(home, 'sessions', readdirSync(join(home, 'sessions'))[0]!);
    const replay = await runCli(['replay', file, '--machines'], { env: { BRIDLE_HOME: home } });
    expect(replay.code, replay.stdout).toBe(0);
    expect(replay.stdout).toMatch(/machines: .*identical|byte for byte/i);

    // What it cost, at the shipped list prices: each step's uncached input, cache reads, cache writes and output priced apart.
    const cost = await runCli(['cost', file, '--json'], { env: { BRIDLE_HOME: home } });
    expect(cost.code, cost.stderr).toBe(0);
    const report = JSON.parse(cost.stdout) as { steps: { usd: number; tokens: { input: number; cached: number; cacheWrite: number } }[]; total: { usd: number } };
    expect(report.steps.map((s) => [s.tokens.input, s.tokens.cached, s.tokens.cacheWrite])).toEqual([[110, 0, 10], [300, 90, 10], [490, 180, 10]]);
    // (100·3 + 10·3.75 + 20·15) + (200·3 + 90·0.3 + 10·3.75 + 20·15) + (300·3 + 180·0.3 + 10·3.75 + 20·15), per million.
    expect(report.total.usd).toBeCloseTo(2893.5 / 1e6, 10);
    const table = await runCli(['cost', file], { env: { BRIDLE_HOME: home } });
    expect(table.stdout).toMatch(/^session .*\$0\.002894$/m);
    expect(table.stdout).toContain('prices as of 2025-11-24');
  });
});
