import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { chunk, errorFrame, reasoningChunks, textChunks, toolCallChunks, usageChunk } from '../../test/helpers/openai-chunks.js';
import { errorReply, type OpenAIServer, pause, startOpenAIServer, streamReply } from '../../test/helpers/openai-sse-server.js';
import { request, run, type Drained } from '../../test/helpers/model-stream.js';
import { createOpenAIProvider } from './openai.js';

let srv: OpenAIServer;
beforeAll(async () => void (srv = await startOpenAIServer()));
afterAll(() => srv.close());
beforeEach(() => void srv.requests.splice(0));

const provider = (over: Partial<Parameters<typeof createOpenAIProvider>[0]> = {}) =>
  createOpenAIProvider({ model: 'test-model', baseURL: srv.url, apiKey: 'sk-test', ...over });

/** Every stream, whatever happened: exactly one finish, last, and a clean assembly (I8). */
function wellFormed(d: Drained): Drained {
  expect(d.problems).toEqual([]);
  expect(d.chunks.filter((c) => c.type === 'finish')).toHaveLength(1);
  expect(d.chunks.at(-1)?.type).toBe('finish');
  return d;
}

describe('openai provider: answers', () => {
  test('plain text streams into one text block and finishes ok/stop', async () => {
    srv.enqueue(streamReply(textChunks('hello world')));
    const d = wellFormed(await run(provider()));
    expect(d.assembly.blocks).toEqual([{ type: 'text', text: 'hello world' }]);
    expect(d.finish).toEqual({ kind: 'ok', reason: 'stop' });
    expect(d.chunks.filter((c) => c.type === 'text-delta').length).toBeGreaterThan(1);
    const body = srv.requests[0]!.body;
    expect(body).toMatchObject({ model: 'test-model', stream: true, stream_options: { include_usage: true } });
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are a test.' },
      { role: 'user', content: 'hi' },
    ]);
    expect(body).not.toHaveProperty('tools');
    expect(srv.requests[0]!.headers.authorization).toBe('Bearer sk-test');
  });

  test('two tool calls with interleaved argument fragments become two blocks', async () => {
    const calls = [
      { id: 'call_a', name: 'read_file', arguments: '{"path":"src/a.ts"}' },
      { id: 'call_b', name: 'grep', arguments: '{"pattern":"TODO","path":"."}' },
    ];
    srv.enqueue(streamReply(toolCallChunks(calls, { interleave: true, parts: 4 })));
    const d = wellFormed(await run(provider()));
    expect(d.assembly.blocks).toEqual([
      { type: 'tool-call', id: 'call_a', name: 'read_file', arguments: '{"path":"src/a.ts"}' },
      { type: 'tool-call', id: 'call_b', name: 'grep', arguments: '{"pattern":"TODO","path":"."}' },
    ]);
    const starts = d.chunks.filter((c) => c.type === 'block-start').map((c) => c.index);
    expect(starts).toEqual([0, 1]);
    expect(d.finish).toEqual({ kind: 'ok', reason: 'tool-calls' });
  });

  test('reasoning_content deltas become a reasoning block before the text', async () => {
    srv.enqueue(streamReply([...reasoningChunks('think first'), ...textChunks('answer')]));
    const d = wellFormed(await run(provider()));
    expect(d.assembly.blocks).toEqual([
      { type: 'reasoning', text: 'think first' },
      { type: 'text', text: 'answer' },
    ]);
  });

  test('usage from the final choices-less chunk, with reasoning and cached details', async () => {
    srv.enqueue(
      streamReply([...textChunks('ok'), usageChunk({ prompt_tokens: 120, completion_tokens: 30, reasoning_tokens: 12, cached_tokens: 100 })]),
    );
    const d = wellFormed(await run(provider()));
    const usage = { inputTokens: 120, outputTokens: 30, reasoningTokens: 12, cachedTokens: 100 };
    expect(d.chunks.at(-2)).toEqual({ type: 'usage', usage });
    expect(d.assembly.usage).toEqual(usage);
  });

  test('malformed tool-argument JSON passes through verbatim', async () => {
    srv.enqueue(streamReply(toolCallChunks([{ id: 'c1', name: 'edit', arguments: '{"path": "a.ts", oops' }])));
    const d = wellFormed(await run(provider()));
    expect(d.assembly.blocks).toEqual([{ type: 'tool-call', id: 'c1', name: 'edit', arguments: '{"path": "a.ts", oops' }]);
    expect(d.finish).toEqual({ kind: 'ok', reason: 'tool-calls' });
  });

  test('length is an ok finish with its reason', async () => {
    srv.enqueue(streamReply(textChunks('cut sh', { finish: 'length' })));
    expect(wellFormed(await run(provider())).finish).toEqual({ kind: 'ok', reason: 'length' });
  });

  test('a finish reason with no content and no tool calls is EMPTY_RESPONSE', async () => {
    srv.enqueue(streamReply([chunk({ role: 'assistant', content: '' }), chunk({}, 'stop')]));
    const d = wellFormed(await run(provider()));
    expect(d.finish).toMatchObject({ kind: 'error', code: 'EMPTY_RESPONSE' });
    expect(d.assembly.blocks).toEqual([]);
  });
});

describe('openai provider: the request on the wire', () => {
  test('I7: only name, description and parameters of a tool reach the wire', async () => {
    srv.enqueue(streamReply(textChunks('ok')));
    const spec = { name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: {} } };
    const leaky = { ...spec, execute: () => 'secret', idempotent: true, approval: 'ask' };
    wellFormed(await run(provider(), request({ tools: [leaky] })));
    expect(srv.requests[0]!.body.tools).toEqual([{ type: 'function', function: spec }]);
  });

  test('assistant tool calls and tool results go out in wire shape; params pass through', async () => {
    srv.enqueue(streamReply(textChunks('done')));
    const req = request({
      temperature: 0.2,
      maxTokens: 256,
      messages: [
        { role: 'user', content: 'read a.ts' },
        { role: 'assistant', content: null, reasoning: 'hidden', toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' }] },
        { role: 'tool', toolCallId: 'c1', content: 'export {}' },
      ],
    });
    wellFormed(await run(provider(), req));
    const body = srv.requests[0]!.body;
    expect(body.messages.slice(1)).toEqual([
      { role: 'user', content: 'read a.ts' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'export {}' },
    ]);
    expect(body).toMatchObject({ temperature: 0.2, max_tokens: 256 });
  });
});

describe('openai provider: failures (I8)', () => {
  test('401 → AUTH with status', async () => {
    srv.enqueue(errorReply(401, 'Incorrect API key provided', { code: 'invalid_api_key' }));
    expect(wellFormed(await run(provider())).finish).toMatchObject({ kind: 'error', code: 'AUTH', status: 401 });
  });

  test('403 → AUTH, 404 → BAD_REQUEST, plain 400 → BAD_REQUEST', async () => {
    srv.enqueue(errorReply(403), errorReply(404, 'model not found'), errorReply(400, 'bad field'));
    expect((await run(provider())).finish).toMatchObject({ code: 'AUTH', status: 403 });
    expect((await run(provider())).finish).toMatchObject({ code: 'BAD_REQUEST', status: 404 });
    expect((await run(provider())).finish).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
  });

  test('429 with Retry-After seconds → RATE_LIMIT with retryAfterMs; the SDK does not retry', async () => {
    srv.enqueue(errorReply(429, 'slow down', { headers: { 'retry-after': '2' } }));
    const d = wellFormed(await run(provider()));
    expect(d.finish).toEqual({ kind: 'error', code: 'RATE_LIMIT', status: 429, retryAfterMs: 2000, message: '429 slow down' });
    expect(srv.requests).toHaveLength(1);
  });

  test('429 with retry-after-ms, and with an HTTP-date read against the injected clock', async () => {
    srv.enqueue(errorReply(429, 'a', { headers: { 'retry-after-ms': '150' } }));
    expect((await run(provider())).finish).toMatchObject({ code: 'RATE_LIMIT', retryAfterMs: 150 });
    const now = Date.parse('2025-01-01T00:00:00Z');
    srv.enqueue(errorReply(429, 'b', { headers: { 'retry-after': new Date(now + 5000).toUTCString() } }));
    expect((await run(provider({ now: () => now }))).finish).toMatchObject({ code: 'RATE_LIMIT', retryAfterMs: 5000 });
  });

  test('500 → SERVER, one request only', async () => {
    srv.enqueue(errorReply(500, 'internal'));
    expect(wellFormed(await run(provider())).finish).toMatchObject({ kind: 'error', code: 'SERVER', status: 500 });
    expect(srv.requests).toHaveLength(1);
  });

  test('context_length_exceeded → CONTEXT_WINDOW_EXCEEDED (by code, and by a vLLM-style message)', async () => {
    srv.enqueue(errorReply(400, 'too long', { code: 'context_length_exceeded' }));
    expect(wellFormed(await run(provider())).finish).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', status: 400 });
    srv.enqueue(errorReply(400, "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens"));
    expect((await run(provider())).finish).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED' });
  });

  test('a connection dropped mid-stream → TRANSPORT, not success; the partial text is kept', async () => {
    srv.enqueue({ type: 'drop', chunks: textChunks('partial answer', { finish: null }) });
    const d = wellFormed(await run(provider()));
    expect(d.finish).toMatchObject({ kind: 'error', code: 'TRANSPORT' });
    expect(d.assembly.blocks).toEqual([{ type: 'text', text: 'partial answer' }]);
  });

  test('a stream that ends cleanly without a finish reason → TRANSPORT', async () => {
    srv.enqueue(streamReply(textChunks('looks complete', { finish: null })));
    const d = wellFormed(await run(provider()));
    expect(d.finish).toEqual({ kind: 'error', code: 'TRANSPORT', message: 'stream ended without a finish reason' });
  });

  test('an error frame mid-stream → SERVER, or by its code', async () => {
    srv.enqueue(streamReply([...textChunks('hel', { finish: null }), errorFrame({ message: 'overloaded', type: 'server_error' })]));
    expect(wellFormed(await run(provider())).finish).toMatchObject({ kind: 'error', code: 'SERVER', message: 'overloaded' });
    srv.enqueue(streamReply([errorFrame({ message: 'too long', code: 'context_length_exceeded' })]));
    expect(wellFormed(await run(provider())).finish).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED' });
    srv.enqueue(streamReply([errorFrame({ message: 'busy', code: 429 })]));
    expect(wellFormed(await run(provider())).finish).toMatchObject({ code: 'RATE_LIMIT', status: 429 });
  });

  test('a refused connection → TRANSPORT', async () => {
    const gone = await startOpenAIServer();
    await gone.close();
    const d = wellFormed(await run(provider({ baseURL: gone.url })));
    expect(d.finish).toMatchObject({ kind: 'error', code: 'TRANSPORT' });
  });

  test('slow headers → TIMEOUT; a stalled body → TIMEOUT', async () => {
    srv.enqueue(streamReply(textChunks('late'), { headersDelayMs: 400 }));
    expect(wellFormed(await run(provider({ streamIdleMs: 100 }))).finish).toMatchObject({ kind: 'error', code: 'TIMEOUT' });
    srv.enqueue(streamReply([...textChunks('stal', { finish: null }), pause(400), ...textChunks('led')]));
    const d = wellFormed(await run(provider({ streamIdleMs: 100 })));
    expect(d.finish).toMatchObject({ kind: 'error', code: 'TIMEOUT' });
    expect(d.assembly.blocks).toEqual([{ type: 'text', text: 'stal' }]);
  });
});

describe('openai provider: abort', () => {
  test('an abort mid-stream ends with aborted, open blocks closed', async () => {
    srv.enqueue(streamReply([...textChunks('first part', { finish: null }), pause(2000), ...textChunks(' rest')]));
    const ac = new AbortController();
    const chunks = provider().stream(request(), ac.signal);
    const seen: string[] = [];
    const d = wellFormed(
      await run({
        id: 'tap',
        stream: async function* () {
          for await (const c of chunks) {
            seen.push(c.type);
            if (c.type === 'text-delta') ac.abort();
            yield c;
          }
        },
      }),
    );
    expect(d.finish).toEqual({ kind: 'aborted' });
    expect(d.assembly.blocks[0]).toMatchObject({ type: 'text' });
  });

  test('an already aborted signal ends with aborted and sends nothing', async () => {
    const ac = new AbortController();
    ac.abort();
    const d = wellFormed(await run(provider(), request(), ac.signal));
    expect(d.chunks).toEqual([{ type: 'finish', finish: { kind: 'aborted' } }]);
    expect(srv.requests).toHaveLength(0);
  });

  test('an abort while waiting for the headers ends with aborted', async () => {
    srv.enqueue({ type: 'hang' });
    const ac = new AbortController();
    // Once the server holds the request (and has taken the hang): a fixed delay could abort before the request
    // was sent, or leave it to reach the server during the next test, which then read it as its own.
    const held = setInterval(() => srv.requests.length > 0 && (clearInterval(held), ac.abort()), 5);
    try {
      expect(wellFormed(await run(provider(), request(), ac.signal)).finish).toEqual({ kind: 'aborted' });
    } finally {
      clearInterval(held);
    }
  });
});

describe('openai provider: API key', () => {
  test('no key for a remote base URL: AUTH on every stream, no network, no throw', async () => {
    let fetched = 0;
    const p = createOpenAIProvider({ model: 'm', fetch: async () => (fetched++, new Response('')) });
    for (let i = 0; i < 2; i++) {
      const d = wellFormed(await run(p));
      expect(d.finish).toMatchObject({ kind: 'error', code: 'AUTH' });
      expect((d.finish as { message: string }).message).toMatch(/^no API key: set OPENAI_API_KEY/);
    }
    expect(fetched).toBe(0);
  });

  test('no key for a loopback base URL: a placeholder key is sent', async () => {
    srv.enqueue(streamReply(textChunks('local')));
    const d = wellFormed(await run(provider({ apiKey: undefined })));
    expect(d.finish).toEqual({ kind: 'ok', reason: 'stop' });
    expect(srv.requests[0]!.headers.authorization).toBe('Bearer bridle-local');
  });
});

describe('openai-chat provider: the row config it shares with openai-responses', () => {
  test('maxOutputTokens goes out as max_tokens when the request sets none, reasoningEffort as reasoning_effort; neither when unset', async () => {
    srv.enqueue(streamReply(textChunks('a')), streamReply(textChunks('b')), streamReply(textChunks('c')));
    wellFormed(await run(provider({ maxOutputTokens: 123, reasoningEffort: 'low' })));
    wellFormed(await run(provider({ maxOutputTokens: 123 }), request({ maxTokens: 7 })));
    wellFormed(await run(provider()));
    expect(srv.requests.map((q) => [q.body.max_tokens, q.body.reasoning_effort])).toEqual([
      [123, 'low'],
      [7, undefined],
      [undefined, undefined],
    ]);
  });
});
