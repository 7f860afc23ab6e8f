/**
 * What a session does with what a real provider returns: the `openai`
 * provider against the local SSE server, inside a whole session, and the log
 * that comes out.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIProvider } from '../adapters/model/openai.js';
import { loadFixture } from '../test/fixtures/provider-streams/load.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';
import { type OpenAIServer, raw, startOpenAIServer, streamReply, textReply, toolCallReply } from '../test/helpers/openai-sse-server.js';
import { textChunks, usageChunk } from '../test/helpers/openai-chunks.js';
import type { EntryOf } from '../log/entries.js';
import { deriveMessages } from '../log/derive-messages.js';
import { verifyLog } from '../log/verify.js';

let srv: OpenAIServer;
let h: Harness | undefined;
beforeAll(async () => void (srv = await startOpenAIServer()));
afterAll(() => srv.close());
afterEach(() => {
  h?.cleanup();
  h = undefined;
});

const openai = () => createOpenAIProvider({ model: 'm', baseURL: srv.url, apiKey: 'sk-test' });
const answers = (x: Harness) => x.entries().filter((e): e is EntryOf<'assistant/message'> => e.kind === 'assistant/message');

describe('a session over the openai provider', () => {
  it('a refusal is logged as what the model said, with finish reason refusal; the model sees it next turn', async () => {
    srv.enqueue(streamReply([raw(loadFixture('openai-refusal.sse').body)], { done: false }));
    h = createHarness(openai());
    const out = await h.session.run('do something bad');
    expect(out).toMatchObject({ reason: 'completed', steps: 1 });
    const [answer] = answers(h);
    expect(answer!.blocks).toEqual([{ type: 'text', text: "I'm sorry, I can't assist with that request.", refusal: true }]);
    expect(answer!.finish).toEqual({ kind: 'ok', reason: 'refusal' });
    expect(deriveMessages(h.entries()).at(-1)).toEqual({ role: 'assistant', content: "I'm sorry, I can't assist with that request." });
    expect(verifyLog(h.entries()).ok).toBe(true);
  });

  it('two tool calls with the same id never reach the next request as two tool messages with one id', async () => {
    srv.enqueue(
      toolCallReply([
        { id: 'call_dup', name: 'list_dir', arguments: '{}' },
        { id: 'call_dup', name: 'glob', arguments: '{"pattern":"*"}' },
      ]),
      textReply('done'),
    );
    h = createHarness(openai());
    expect(await h.session.run('look')).toMatchObject({ reason: 'completed', steps: 2 });
    const next = srv.requests.at(-1)!.body.messages as { role: string; tool_call_id?: string; tool_calls?: { id: string }[] }[];
    const toolIds = next.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
    expect(toolIds).toEqual(['call_dup', 'call_dup~2']);
    expect(next.find((m) => m.tool_calls)!.tool_calls!.map((c) => c.id)).toEqual(['call_dup', 'call_dup~2']);
    // Visible in the log: the renamed call carries the id the model sent.
    expect(answers(h)[0]!.blocks).toEqual([
      { type: 'tool-call', id: 'call_dup', name: 'list_dir', arguments: '{}' },
      { type: 'tool-call', id: 'call_dup~2', name: 'glob', arguments: '{"pattern":"*"}', renamedFrom: 'call_dup' },
    ]);
    expect(verifyLog(h.entries()).ok).toBe(true);
  });

  it('usage with completion_tokens 1e308 is clamped at the adapter: the turn completes, the session lives on', async () => {
    srv.enqueue(streamReply([...textChunks('fine'), usageChunk({ prompt_tokens: 12, completion_tokens: 1e308 })]), textReply('again'));
    h = createHarness(openai());
    expect(await h.session.run('hi')).toMatchObject({ reason: 'completed' });
    expect(answers(h)[0]!.usage).toEqual({ inputTokens: 12, outputTokens: Number.MAX_SAFE_INTEGER });
    expect(await h.session.run('and again')).toMatchObject({ reason: 'completed' });
    expect(verifyLog(h.entries()).ok).toBe(true);
  });
});
