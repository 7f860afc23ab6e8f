/**
 * Recorded real Anthropic Messages streams (test/fixtures/provider-streams/README.md names each source),
 * served at the wire to the real `@anthropic-ai/sdk` twice: once through bridle's provider, once through the
 * SDK's own accumulator (`messages.stream(...)` then `finalMessage()`). What bridle assembles — text, tool
 * calls, thinking blocks with their signatures (byte for byte), usage, the stop — must be what the SDK
 * assembles. Never run against the live endpoint.
 */
import Anthropic from '@anthropic-ai/sdk';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { anthropicFixtureNames } from '../../test/fixtures/provider-streams/load.js';
import { raw, startOpenAIServer, type OpenAIServer } from '../../test/helpers/openai-sse-server.js';
import { run } from '../../test/helpers/model-stream.js';
import { createAnthropicProvider } from './anthropic.js';

const FIXTURES = anthropicFixtureNames();
let srv: OpenAIServer;
let origin: string;
beforeAll(async () => {
  srv = await startOpenAIServer();
  origin = srv.url.replace(/\/v1$/, '');
});
afterAll(() => srv.close());

/** A recording (one event a line) as the API frames it: `event: <type>` then `data: <the line, unchanged>`, in 61-byte pieces. */
function served(name: string) {
  const lines = readFileSync(new URL(`../../test/fixtures/provider-streams/${name}`, import.meta.url), 'utf8').split('\n').filter((l) => l.trim() !== '');
  const body = Buffer.from(lines.map((l) => `event: ${(JSON.parse(l) as { type: string }).type}\ndata: ${l}\n\n`).join(''), 'utf8');
  const pieces = [];
  for (let i = 0; i < body.length; i += 61) pieces.push(raw(body.subarray(i, i + 61)));
  return { type: 'stream' as const, chunks: pieces, done: false };
}

async function sdkReading(name: string) {
  srv.enqueue(served(name));
  const client = new Anthropic({ apiKey: 'sk-test', baseURL: origin, maxRetries: 0 });
  const m = await client.messages.stream({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
  const content = m.content as unknown as Record<string, any>[];
  return {
    stop: m.stop_reason,
    texts: content.filter((b) => b.type === 'text').map((b) => b.text as string),
    calls: content.filter((b) => b.type === 'tool_use').map((b) => ({ id: b.id, name: b.name, input: b.input })),
    thinking: content.filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking').map((b) => ({ type: b.type, thinking: b.thinking, signature: b.signature })),
    // bridle counts every input token, the cache's included (as OpenAI does); Anthropic's input_tokens leaves the cache's out.
    usage: { input: m.usage.input_tokens + (m.usage.cache_read_input_tokens ?? 0) + (m.usage.cache_creation_input_tokens ?? 0), output: m.usage.output_tokens, cacheRead: m.usage.cache_read_input_tokens ?? undefined, cacheWrite: m.usage.cache_creation_input_tokens ?? undefined },
  };
}

async function bridleReading(name: string) {
  srv.enqueue(served(name));
  const d = await run(createAnthropicProvider({ model: 'm', baseURL: origin, apiKey: 'sk-test' }));
  expect(d.problems).toEqual([]);
  // The response's first chunk is said first, bare: the step times it (ADR 0079).
  expect(d.chunks[0]).toEqual({ type: 'first-chunk' });
  const blocks = d.assembly.blocks;
  const u = d.assembly.usage!;
  return {
    finish: d.finish!,
    texts: blocks.flatMap((b) => (b.type === 'text' && !b.refusal ? [b.text] : [])),
    refusals: blocks.flatMap((b) => (b.type === 'text' && b.refusal ? [b.text] : [])),
    calls: blocks.flatMap((b) => (b.type === 'tool-call' ? [{ id: b.id, name: b.name, input: JSON.parse(b.arguments) }] : [])),
    thinking: blocks.flatMap((b) => (b.type === 'reasoning' ? [{ text: b.text, provider: b.provider, data: b.data as Record<string, unknown> }] : [])),
    usage: { input: u.inputTokens, output: u.outputTokens, cacheRead: u.cachedTokens, cacheWrite: u.cacheWriteTokens, reasoning: u.reasoningTokens },
  };
}

const STOP = { end_turn: { kind: 'ok', reason: 'stop' }, tool_use: { kind: 'ok', reason: 'tool-calls' }, refusal: { kind: 'ok', reason: 'refusal' } } as const;

describe('recorded Anthropic streams: bridle assembles what the SDK assembles', () => {
  test('the recordings are there: text, a tool call, thinking with a signature, a refusal', () => {
    expect(FIXTURES).toEqual(['anthropic-refusal.chunks.txt', 'anthropic-text.chunks.txt', 'anthropic-thinking.chunks.txt', 'anthropic-tool-use.chunks.txt']);
  });

  for (const name of FIXTURES) {
    test(name, async () => {
      const sdk = await sdkReading(name);
      const ours = await bridleReading(name);
      expect(ours.finish).toEqual(STOP[sdk.stop as keyof typeof STOP]);
      expect(ours.texts).toEqual(sdk.texts);
      expect(ours.calls).toEqual(sdk.calls);
      expect(ours.thinking.map((t) => t.text)).toEqual(sdk.thinking.map((t) => t.thinking));
      // The block as the API will want it back: the SDK's own, byte for byte, signature included.
      for (const [i, t] of ours.thinking.entries()) {
        expect(t.provider).toBe('anthropic');
        expect(JSON.stringify(t.data)).toBe(JSON.stringify({ type: 'thinking', thinking: sdk.thinking[i]!.thinking, signature: sdk.thinking[i]!.signature }));
      }
      expect({ input: ours.usage.input, output: ours.usage.output, cacheRead: ours.usage.cacheRead, cacheWrite: ours.usage.cacheWrite }).toEqual(sdk.usage);
    });
  }

  test('the thinking recording reports its thinking tokens; the refusal says what the API explained', async () => {
    expect((await bridleReading('anthropic-thinking.chunks.txt')).usage.reasoning).toBe(62);
    expect((await bridleReading('anthropic-refusal.chunks.txt')).refusals).toEqual([expect.stringContaining('Usage Policy')]);
  });
});
