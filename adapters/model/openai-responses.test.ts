/**
 * The `openai-responses` provider against a local Responses-wire server, through the real `openai` SDK:
 * what the request carries, how each ending maps onto the chunk protocol (one finish, never a throw: I8).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { errorReply, startOpenAIServer, type OpenAIServer } from '../../test/helpers/openai-sse-server.js';
import { callEvents, completed, errorEvent, failed, incomplete, reasoningEvents, reasoningItem, refusalEvents, responsesDrop, responsesReply, textEvents } from '../../test/helpers/responses-events.js';
import { request, run, type Drained } from '../../test/helpers/model-stream.js';
import { createResponsesProvider } from './openai-responses.js';

let srv: OpenAIServer;
beforeAll(async () => void (srv = await startOpenAIServer()));
afterAll(() => srv.close());
beforeEach(() => void srv.requests.splice(0));

const provider = (over: Partial<Parameters<typeof createResponsesProvider>[0]> = {}) =>
  createResponsesProvider({ model: 'gpt-test', baseURL: srv.url, apiKey: 'sk-test', now: () => 0, ...over });

function wellFormed(d: Drained): Drained {
  expect(d.problems).toEqual([]);
  expect(d.chunks.filter((c) => c.type === 'finish')).toHaveLength(1);
  return d;
}

const item = reasoningItem('rs_1', ['**Plan**', 'List the files.'], 'gAAAA-opaque==');

describe('openai-responses provider: the request', () => {
  test('store false, encrypted reasoning asked for, the session id as cache key, effort and max output tokens; tools carry only name, description, parameters (I7)', async () => {
    srv.enqueue(responsesReply([...textEvents(0, 'ok'), completed()]));
    const tool = { name: 'list_dir', description: 'List.', parameters: { type: 'object' }, secret: 'never on the wire' } as never;
    wellFormed(await run(provider({ reasoningEffort: 'high', maxOutputTokens: 2048 }), request({ tools: [tool], cacheKey: 'sess-1' })));
    const q = srv.requests[0]!;
    expect(q.path).toBe('/v1/responses');
    expect(q.body).toEqual({
      model: 'test-model',
      input: [{ role: 'user', content: 'hi' }],
      stream: true,
      store: false,
      include: ['reasoning.encrypted_content'],
      instructions: 'You are a test.',
      tools: [{ type: 'function', name: 'list_dir', description: 'List.', parameters: { type: 'object' }, strict: false }],
      prompt_cache_key: 'sess-1',
      reasoning: { effort: 'high', summary: 'auto' },
      max_output_tokens: 2048,
    });
  });

  test("input items: the step's own reasoning item first, exactly as logged, then its text and calls, then the outputs; another provider's reasoning is dropped", async () => {
    srv.enqueue(responsesReply([...textEvents(0, 'ok'), completed()]));
    const messages = [
      { role: 'user' as const, content: 'go' },
      {
        role: 'assistant' as const,
        content: 'Looking.',
        reasoning: 'x',
        carried: [
          { text: 'thought', provider: 'anthropic' as const, data: { type: 'thinking', thinking: 'x', signature: 's' } },
          { text: '**Plan**\n\nList the files.', provider: 'openai-responses' as const, data: item },
        ],
        toolCalls: [
          { id: 'call_a', name: 'list_dir', arguments: '{}' },
          { id: 'call_b', name: 'read_file', arguments: '{"path":"a"}' },
        ],
      },
      { role: 'tool' as const, toolCallId: 'call_a', content: 'a\nb' },
      { role: 'tool' as const, toolCallId: 'call_b', content: 'A' },
    ];
    wellFormed(await run(provider(), request({ messages })));
    expect(srv.requests[0]!.body.input).toEqual([
      { role: 'user', content: 'go' },
      item,
      { role: 'assistant', content: 'Looking.' },
      { type: 'function_call', call_id: 'call_a', name: 'list_dir', arguments: '{}' },
      { type: 'function_call', call_id: 'call_b', name: 'read_file', arguments: '{"path":"a"}' },
      { type: 'function_call_output', call_id: 'call_a', output: 'a\nb' },
      { type: 'function_call_output', call_id: 'call_b', output: 'A' },
    ]);
  });
});

describe('openai-responses provider: answers', () => {
  test('a reasoning item then text: the summary is thought text, the item is handed over whole at block-end; usage with cached and reasoning tokens', async () => {
    srv.enqueue(responsesReply([...reasoningEvents(0, item), ...textEvents(1, 'Two files.'), completed({ input_tokens: 100, output_tokens: 40, cached_tokens: 64, reasoning_tokens: 30 })]));
    const d = wellFormed(await run(provider()));
    expect(d.assembly.blocks).toEqual([
      { type: 'reasoning', text: '**Plan**\n\nList the files.', provider: 'openai-responses', data: item },
      { type: 'text', text: 'Two files.' },
    ]);
    expect(d.assembly.usage).toEqual({ inputTokens: 100, outputTokens: 40, reasoningTokens: 30, cachedTokens: 64 });
    expect(d.finish).toEqual({ kind: 'ok', reason: 'stop' });
  });

  test('parallel function calls with interleaved argument deltas become two call blocks, finish tool-calls', async () => {
    const calls = [
      { call_id: 'call_a', name: 'read_file', arguments: '{"path":"src/a.ts"}' },
      { call_id: 'call_b', name: 'grep', arguments: '{"pattern":"TODO","path":"."}' },
    ];
    srv.enqueue(responsesReply([...reasoningEvents(0, item), ...callEvents(1, calls, true), completed()]));
    const d = wellFormed(await run(provider()));
    expect(d.assembly.blocks.slice(1)).toEqual(calls.map((c) => ({ type: 'tool-call', id: c.call_id, name: c.name, arguments: c.arguments })));
    expect(d.finish).toEqual({ kind: 'ok', reason: 'tool-calls' });
  });

  test('a refusal is a refusal-marked text block and finish refusal', async () => {
    srv.enqueue(responsesReply([...refusalEvents(0, "I can't help with that."), completed()]));
    const d = wellFormed(await run(provider()));
    expect(d.assembly.blocks).toEqual([{ type: 'text', text: "I can't help with that.", refusal: true }]);
    expect(d.finish).toEqual({ kind: 'ok', reason: 'refusal' });
  });

  test('response.incomplete for max_output_tokens is the max-tokens finish (length), never a clean stop', async () => {
    srv.enqueue(responsesReply([...textEvents(0, 'half'), incomplete('max_output_tokens')]));
    expect(wellFormed(await run(provider())).finish).toEqual({ kind: 'ok', reason: 'length' });
  });

  test('completed with nothing in it is EMPTY_RESPONSE', async () => {
    srv.enqueue(responsesReply([completed()]));
    expect(wellFormed(await run(provider())).finish).toMatchObject({ kind: 'error', code: 'EMPTY_RESPONSE' });
  });
});

describe('openai-responses provider: failures (I8: one finish, never a throw)', () => {
  test('a stream cut before response.completed is TRANSPORT, never success, with what came kept', async () => {
    srv.enqueue(responsesDrop([...reasoningEvents(0, item), ...textEvents(1, 'half an ans').slice(0, 3)]));
    const d = wellFormed(await run(provider()));
    expect(d.finish).toMatchObject({ kind: 'error', code: 'TRANSPORT' });
    expect(d.assembly.blocks[0]).toMatchObject({ type: 'reasoning', data: item });
  });

  test('a stream that ends cleanly but without a terminal event is TRANSPORT', async () => {
    srv.enqueue(responsesReply(textEvents(0, 'all of it')));
    expect(wellFormed(await run(provider())).finish).toMatchObject({ kind: 'error', code: 'TRANSPORT', message: 'stream ended before response.completed' });
  });

  test('response.failed maps its code: rate limit, context overflow (so overflow-compaction runs), anything else SERVER', async () => {
    srv.enqueue(
      responsesReply([failed('rate_limit_exceeded', 'Rate limit reached')]),
      responsesReply([failed('context_length_exceeded', 'Your input exceeds the context window of this model.')]),
      responsesReply([failed('server_error', 'The server had an error')]),
    );
    expect(wellFormed(await run(provider())).finish).toMatchObject({ kind: 'error', code: 'RATE_LIMIT' });
    expect(wellFormed(await run(provider())).finish).toMatchObject({ kind: 'error', code: 'CONTEXT_WINDOW_EXCEEDED' });
    expect(wellFormed(await run(provider())).finish).toMatchObject({ kind: 'error', code: 'SERVER', message: 'The server had an error' });
  });

  test('an error event mid-stream ends it with its code', async () => {
    srv.enqueue(responsesReply([...textEvents(0, 'x').slice(0, 2), errorEvent('server_error', 'boom')]));
    expect(wellFormed(await run(provider())).finish).toMatchObject({ kind: 'error', code: 'SERVER', message: 'boom' });
  });

  test('HTTP 429 is RATE_LIMIT with the retry-after bridle waits for (the SDK does not retry); 400 context_length_exceeded is CONTEXT_WINDOW_EXCEEDED', async () => {
    srv.enqueue(errorReply(429, 'slow down', { headers: { 'retry-after': '7' } }), errorReply(400, 'too long', { code: 'context_length_exceeded' }));
    expect(wellFormed(await run(provider())).finish).toEqual({ kind: 'error', code: 'RATE_LIMIT', message: expect.any(String), status: 429, retryAfterMs: 7000 });
    expect(srv.requests).toHaveLength(1);
    expect(wellFormed(await run(provider())).finish).toMatchObject({ kind: 'error', code: 'CONTEXT_WINDOW_EXCEEDED', status: 400 });
  });

  test('no key against a remote URL is AUTH on the stream, not a throw', async () => {
    const d = wellFormed(await run(createResponsesProvider({ model: 'm', baseURL: 'https://api.example.invalid/v1' })));
    expect(d.finish).toMatchObject({ kind: 'error', code: 'AUTH' });
  });

  test('an aborted signal ends the stream aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    expect(wellFormed(await run(provider(), request(), ac.signal)).finish).toEqual({ kind: 'aborted' });
  });
});
