/**
 * Recorded real Responses API streams (test/fixtures/provider-streams/README.md names each source), served at
 * the wire to the real `openai` SDK twice: once through bridle's provider, once through the SDK's own
 * accumulator (`responses.stream(...)` then `finalResponse()`). What bridle assembles — text, function calls,
 * reasoning items, usage — must be what the SDK assembles. Never run against the live endpoint.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadResponsesFixture, responsesFixtureNames } from '../../test/fixtures/provider-streams/load.js';
import { raw, startOpenAIServer, type OpenAIServer } from '../../test/helpers/openai-sse-server.js';
import { run } from '../../test/helpers/model-stream.js';
import { createResponsesProvider } from './openai-responses.js';

let srv: OpenAIServer;
beforeAll(async () => void (srv = await startOpenAIServer()));
afterAll(() => srv.close());

/** The body in 97-byte pieces, so frames and characters are cut across reads. */
const served = (body: Buffer) => {
  const pieces = [];
  for (let i = 0; i < body.length; i += 97) pieces.push(raw(body.subarray(i, i + 97)));
  return { type: 'stream' as const, chunks: pieces, done: false };
};

/** A final response in bridle's terms. */
function reading(r: { status?: string; output: unknown[]; usage?: any }) {
  const out = r.output as any[];
  return {
    status: r.status,
    texts: out.filter((o) => o.type === 'message').map((o) => o.content.filter((c: any) => c.type === 'output_text').map((c: any) => c.text).join('')),
    calls: out.filter((o) => o.type === 'function_call').map((o) => ({ id: o.call_id, name: o.name, arguments: o.arguments })),
    reasoning: out.filter((o) => o.type === 'reasoning').map((o) => ({ text: o.summary.map((s: any) => s.text).join('\n\n'), data: o })),
    usage: r.usage
      ? { input: r.usage.input_tokens, output: r.usage.output_tokens, cached: r.usage.input_tokens_details?.cached_tokens, reasoning: r.usage.output_tokens_details?.reasoning_tokens }
      : undefined,
  };
}

/**
 * What the SDK's accumulator assembled, or the error it threw. Where it throws on a stream that did complete
 * (a recording whose output indices skip one: the SDK's accumulator indexes its array by them), the
 * reference is the `response.completed` event's own response, as recorded.
 */
async function sdkReading(body: Buffer, events: any[]) {
  srv.enqueue(served(body));
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: srv.url, maxRetries: 0 });
  try {
    return reading(await client.responses.stream({ model: 'm', input: 'x' }).finalResponse());
  } catch (err) {
    const done = events.find((e) => e.type === 'response.completed');
    if (done && /missing output at index/.test((err as Error).message)) return reading(done.response);
    return { error: err as Error };
  }
}

async function bridleReading(body: Buffer) {
  srv.enqueue(served(body));
  const d = await run(createResponsesProvider({ model: 'm', baseURL: srv.url, apiKey: 'sk-test' }));
  expect(d.problems).toEqual([]);
  // The response's first chunk is said first, bare: the step times it (ADR 0079).
  expect(d.chunks[0]).toEqual({ type: 'first-chunk' });
  const blocks = d.assembly.blocks;
  const u = d.assembly.usage;
  return {
    finish: d.finish!,
    texts: blocks.flatMap((b) => (b.type === 'text' && !b.refusal ? [b.text] : [])),
    calls: blocks.flatMap((b) => (b.type === 'tool-call' ? [{ id: b.id, name: b.name, arguments: b.arguments }] : [])),
    reasoning: blocks.flatMap((b) => (b.type === 'reasoning' ? [{ text: b.text, data: b.data, provider: b.provider }] : [])),
    usage: u ? { input: u.inputTokens, output: u.outputTokens, cached: u.cachedTokens, reasoning: u.reasoningTokens } : undefined,
  };
}

describe('recorded Responses API streams: bridle assembles what the SDK assembles', () => {
  test('the recordings are there: four files, seven responses', () => {
    expect(responsesFixtureNames()).toHaveLength(4);
    expect(responsesFixtureNames().map((n) => loadResponsesFixture(n).bodies.length)).toEqual([1, 1, 4, 1]);
  });

  for (const name of responsesFixtureNames()) {
    test(name, async () => {
      const f = loadResponsesFixture(name);
      for (const [i, body] of f.bodies.entries()) {
        const sdk = await sdkReading(body, f.events[i]!);
        const ours = await bridleReading(body);
        if ('error' in sdk) {
          // The recording's `error` event: the SDK throws, bridle ends the stream with an error finish.
          expect(ours.finish).toMatchObject({ kind: 'error', message: sdk.error.message.replace(/^\d+ /, '') });
          continue;
        }
        expect(sdk.status).toBe('completed');
        expect(ours.finish).toEqual({ kind: 'ok', reason: sdk.calls.length > 0 ? 'tool-calls' : 'stop' });
        expect(ours.texts).toEqual(sdk.texts);
        expect(ours.calls).toEqual(sdk.calls);
        expect(ours.reasoning).toEqual(sdk.reasoning.map((r) => ({ ...r, provider: 'openai-responses' })));
        // Byte for byte: the item as the wire carried it, key order included.
        for (const [i, r] of ours.reasoning.entries()) expect(JSON.stringify(r.data)).toBe(JSON.stringify(sdk.reasoning[i]!.data));
        expect(ours.usage).toEqual(sdk.usage);
      }
    });
  }
});
