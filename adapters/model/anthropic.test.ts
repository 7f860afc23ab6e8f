/**
 * The `anthropic` provider at the wire: the real SDK against a local server speaking the Messages API's SSE.
 * What goes out (thinking blocks sent back first and unchanged, tool results folded into user turns, at most
 * four cache breakpoints), how each ending maps (I8: one finish, never a throw), and how errors map.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raw, startOpenAIServer, type OpenAIServer } from '../../test/helpers/openai-sse-server.js';
import { request, run } from '../../test/helpers/model-stream.js';
import type { ModelMessage } from '../../log/messages.js';
import { createAnthropicProvider } from './anthropic.js';
import { createAnthropicStreamMapper } from './anthropic-stream.js';
import { breakpointsOf, MAX_BREAKPOINTS, toAnthropicParams } from './anthropic-wire.js';

let srv: OpenAIServer;
let origin: string;
beforeAll(async () => {
  srv = await startOpenAIServer();
  origin = srv.url.replace(/\/v1$/, '');
});
afterAll(() => srv.close());

const frames = (events: object[]) => ({ type: 'stream' as const, done: false, chunks: events.map((e) => raw(`event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`)) });
const start = (usage = { input_tokens: 10, output_tokens: 1 }) => ({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage } });
const stop = (reason: string, usage: object = { output_tokens: 5 }) => [{ type: 'message_delta', delta: { stop_reason: reason, stop_sequence: null }, usage }, { type: 'message_stop' }];
const provider = () => createAnthropicProvider({ model: 'm', baseURL: origin, apiKey: 'sk-test' });
const THINKING = { type: 'thinking', thinking: 'I should list the files.', signature: 'c2lnbmF0dXJlLWJ5dGVz+/=' };
const REDACTED = { type: 'redacted_thinking', data: 'RW5jcnlwdGVkIGJsb2I=' };

describe('what goes out', () => {
  const history: ModelMessage[] = [
    { role: 'user', content: 'list the files' },
    { role: 'assistant', content: null, reasoning: THINKING.thinking, carried: [{ text: THINKING.thinking, provider: 'anthropic', data: THINKING }, { text: '', provider: 'anthropic', data: REDACTED }, { text: 'r', provider: 'openai-responses', data: { type: 'reasoning', id: 'rs_1' } }], toolCalls: [{ id: 'toolu_1', name: 'list_dir', arguments: '{"path":"."}' }, { id: 'toolu_2', name: 'glob', arguments: '{"pattern":"*"}' }] },
    { role: 'tool', toolCallId: 'toolu_1', content: 'a.txt' },
    { role: 'tool', toolCallId: 'toolu_2', content: 'a.txt b.txt' },
  ];

  it('the turn before tool results goes back with its thinking blocks first, unmodified, and no other wire’s reasoning', async () => {
    srv.enqueue(frames([start(), ...stop('end_turn')]));
    await run(provider(), request({ messages: history, tools: [{ name: 'list_dir', description: 'd', parameters: { type: 'object' } }] }));
    const body = srv.requests.at(-1)!.body as { messages: { role: string; content: Record<string, unknown>[] }[] };
    const assistant = body.messages[1]!;
    expect(assistant.role).toBe('assistant');
    expect(assistant.content.slice(0, 2)).toEqual([THINKING, REDACTED]);
    expect(JSON.stringify(assistant.content[0])).toBe(JSON.stringify(THINKING));
    expect(assistant.content.slice(2).map((b) => b.type)).toEqual(['tool_use', 'tool_use']);
    expect(JSON.stringify(body)).not.toContain('rs_1');
    // Both results in one user turn, in call order.
    expect(body.messages[2]!.content.map((b) => [b.type, b.tool_use_id])).toEqual([['tool_result', 'toolu_1'], ['tool_result', 'toolu_2']]);
    expect(srv.requests.at(-1)!.path).toBe('/v1/messages');
  });

  it('cache breakpoints on the last tool, the system prompt, the newest block and the block the request before ended on: never more than the API’s four', () => {
    const tools = Array.from({ length: 5 }, (_, i) => ({ name: `t${i}`, description: 'd', parameters: { type: 'object' } }));
    const p = toAnthropicParams(request({ messages: history, tools }), { model: 'm', maxOutputTokens: 1000 });
    expect(breakpointsOf(p)).toBe(4);
    expect(p.messages[0]!.content.at(-1)).toMatchObject({ type: 'text', cache_control: { type: 'ephemeral' } });
    expect(breakpointsOf(p)).toBeLessThanOrEqual(MAX_BREAKPOINTS);
    expect(p.tools!.map((t) => 'cache_control' in t)).toEqual([false, false, false, false, true]);
    expect(p.system![0]).toMatchObject({ cache_control: { type: 'ephemeral' } });
    expect(p.messages.at(-1)!.content.at(-1)).toMatchObject({ type: 'tool_result', cache_control: { type: 'ephemeral' } });
    // Only name, description and parameters of a tool reach the wire (I7).
    expect(Object.keys(p.tools![0]!).sort()).toEqual(['description', 'input_schema', 'name']);
  });

  it('consecutive requests extend the one before: the next request’s messages start with this one’s', () => {
    const a = toAnthropicParams(request({ messages: history.slice(0, 2) }), { model: 'm', maxOutputTokens: 1000 });
    const b = toAnthropicParams(request({ messages: history }), { model: 'm', maxOutputTokens: 1000 });
    const strip = (m: unknown) => JSON.parse(JSON.stringify(m), (k, v) => (k === 'cache_control' ? undefined : v));
    expect(strip(b.messages).slice(0, a.messages.length)).toEqual(strip(a.messages));
    expect(b.system).toEqual(a.system);
  });

  it('a thinking budget asks for thinking and drops a temperature the API would refuse with it', () => {
    const p = toAnthropicParams(request({ temperature: 0.2 }), { model: 'm', maxOutputTokens: 8000, thinkingBudget: 4000 });
    expect(p.thinking).toEqual({ type: 'enabled', budget_tokens: 4000 });
    expect(p.temperature).toBeUndefined();
    expect(p.max_tokens).toBe(8000);
  });
});

describe('how a stream ends (I8)', () => {
  it('a redacted thinking block arrives whole and is kept as received', async () => {
    srv.enqueue(frames([start(), { type: 'content_block_start', index: 0, content_block: REDACTED }, { type: 'content_block_stop', index: 0 }, { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }, { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'hi' } }, { type: 'content_block_stop', index: 1 }, ...stop('end_turn')]));
    const d = await run(provider());
    expect(d.problems).toEqual([]);
    expect(d.assembly.blocks[0]).toEqual({ type: 'reasoning', text: '', provider: 'anthropic', data: REDACTED });
    expect(d.finish).toEqual({ kind: 'ok', reason: 'stop' });
  });

  it('a stream cut before message_stop is TRANSPORT, never a success', async () => {
    srv.enqueue({ type: 'drop', chunks: frames([start(), { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'half' } }]).chunks });
    const d = await run(provider());
    expect(d.problems).toEqual([]);
    expect(d.finish).toMatchObject({ kind: 'error', code: 'TRANSPORT' });
  });

  it('an unknown stop reason is an error, never a clean stop; max_tokens is length', () => {
    const m = createAnthropicStreamMapper();
    for (const e of [start(), ...stop('something_new')]) m.push(e);
    expect(m.end().at(-1)).toMatchObject({ type: 'finish', finish: { kind: 'error', code: 'UNKNOWN' } });
    const n = createAnthropicStreamMapper();
    for (const e of [start(), ...stop('max_tokens')]) n.push(e);
    expect(n.end().at(-1)).toEqual({ type: 'finish', finish: { kind: 'ok', reason: 'length' } });
  });

  it('a stop reason named like an Object.prototype member is UNKNOWN, not a finish reason that is a function', () => {
    for (const reason of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      const m = createAnthropicStreamMapper();
      for (const e of [start(), ...stop(reason)]) m.push(e);
      expect(m.end().at(-1)).toMatchObject({ type: 'finish', finish: { kind: 'error', code: 'UNKNOWN' } });
    }
  });

  it('an overloaded_error event mid-stream is SERVER, which bridle retries', async () => {
    srv.enqueue(frames([start(), { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]));
    const d = await run(provider());
    expect(d.finish).toMatchObject({ kind: 'error', code: 'SERVER', message: 'Overloaded' });
  });

  it('a pause_turn is continued as the API asks: the paused answer goes back and the answer goes on in one message', async () => {
    srv.enqueue(
      frames([start(), { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'part one. ' } }, { type: 'content_block_stop', index: 0 }, ...stop('pause_turn')]),
      frames([start(), { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'part two.' } }, { type: 'content_block_stop', index: 0 }, ...stop('end_turn')]),
    );
    const before = srv.requests.length;
    const d = await run(provider());
    expect(d.problems).toEqual([]);
    expect(d.assembly.blocks.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['part one. ', 'part two.']);
    expect(d.finish).toEqual({ kind: 'ok', reason: 'stop' });
    const second = srv.requests[before + 1]!.body as { messages: { role: string; content: { text?: string }[] }[] };
    expect(second.messages.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'part one. ' }] });
  });
});

describe('errors at the HTTP level', () => {
  const apiError = (status: number, type: string, message: string, headers: Record<string, string> = {}) => ({ type: 'error' as const, status, body: { type: 'error', error: { type, message } }, headers });

  it('429 is RATE_LIMIT with the server’s retry-after; 529 overloaded is SERVER with it too', async () => {
    srv.enqueue(apiError(429, 'rate_limit_error', 'slow down', { 'retry-after': '7' }));
    expect((await run(provider())).finish).toMatchObject({ kind: 'error', code: 'RATE_LIMIT', status: 429, retryAfterMs: 7000 });
    srv.enqueue(apiError(529, 'overloaded_error', 'Overloaded', { 'retry-after': '2' }));
    expect((await run(provider())).finish).toMatchObject({ kind: 'error', code: 'SERVER', status: 529, retryAfterMs: 2000 });
  });

  it('a prompt that is too long is CONTEXT_WINDOW_EXCEEDED (so overflow-compaction runs); other 400s BAD_REQUEST; 401 AUTH', async () => {
    srv.enqueue(apiError(400, 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'));
    expect((await run(provider())).finish).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED' });
    srv.enqueue(apiError(400, 'invalid_request_error', 'messages: roles must alternate'));
    expect((await run(provider())).finish).toMatchObject({ code: 'BAD_REQUEST' });
    srv.enqueue(apiError(401, 'authentication_error', 'invalid x-api-key'));
    expect((await run(provider())).finish).toMatchObject({ code: 'AUTH' });
  });

  it('no key for a remote endpoint: one AUTH finish naming the variable, no request made', async () => {
    const d = await run(createAnthropicProvider({ model: 'm', baseURL: 'https://api.anthropic.com', apiKeyEnv: 'ANTHROPIC_API_KEY' }));
    expect(d.finish).toMatchObject({ kind: 'error', code: 'AUTH', message: expect.stringContaining('ANTHROPIC_API_KEY') });
  });
});
