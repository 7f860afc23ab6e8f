import { afterEach, expect, test } from 'vitest';
import { createOpenAIProvider } from '../../adapters/model/openai.js';
import { request, run } from './model-stream.js';
import { errorReply, type OpenAIServer, raw, startOpenAIServer, streamReply, textReply, toolCallReply } from './openai-sse-server.js';
import { textChunks } from './openai-chunks.js';

let srv: OpenAIServer | undefined;
afterEach(async () => srv?.close());

test('url, recorded requests, queue before handler, handler by content', async () => {
  srv = await startOpenAIServer();
  expect(srv.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  const p = createOpenAIProvider({ model: 'm', baseURL: srv.url });
  srv.respondWith((body) => {
    const last = body.messages.at(-1);
    return last.role === 'tool' ? textReply(`saw ${last.content}`) : toolCallReply([{ id: 'c1', name: 'ls', arguments: '{}' }]);
  });
  srv.enqueue(textReply('from the queue'));
  expect((await run(p)).assembly.blocks).toEqual([{ type: 'text', text: 'from the queue' }]);
  expect((await run(p)).finish).toEqual({ kind: 'ok', reason: 'tool-calls' });
  const tool = request({ messages: [{ role: 'user', content: 'x' }, { role: 'tool', toolCallId: 'c1', content: 'a.ts' }] });
  expect((await run(p, tool)).assembly.blocks).toEqual([{ type: 'text', text: 'saw a.ts' }]);
  expect(srv.requests.map((r) => [r.method, r.path])).toEqual(Array(3).fill(['POST', '/v1/chat/completions']));
  expect(srv.requests[0]!.headers['content-type']).toContain('application/json');
});

test('without a reply or handler the server answers 500 saying so', async () => {
  srv = await startOpenAIServer();
  const d = await run(createOpenAIProvider({ model: 'm', baseURL: srv.url }));
  expect(d.finish).toMatchObject({ code: 'SERVER', message: expect.stringContaining('no reply enqueued') });
});

test('raw frames and error replies pass through as written', async () => {
  srv = await startOpenAIServer();
  srv.enqueue(streamReply([raw(': keep-alive comment\n\n'), ...textChunks('ok')]), errorReply(418, 'teapot'));
  const p = createOpenAIProvider({ model: 'm', baseURL: srv.url });
  expect((await run(p)).finish).toEqual({ kind: 'ok', reason: 'stop' });
  expect((await run(p)).finish).toMatchObject({ code: 'BAD_REQUEST', status: 418 });
});
