/**
 * Every recorded provider stream of test/fixtures/provider-streams, replayed
 * at the wire: the local SSE server sends the recorded body (cut into pieces
 * at arbitrary byte offsets), the real SDK reads it, and the assembled answer
 * must be exactly what the recording says — read from its JSON by
 * `whatItSays`, not by the adapter's own code.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixtureNames, loadFixture, whatItSays } from '../../test/fixtures/provider-streams/load.js';
import { run } from '../../test/helpers/model-stream.js';
import { raw, startOpenAIServer, streamReply, type OpenAIServer } from '../../test/helpers/openai-sse-server.js';
import type { Finish } from '../../log/entry-values.js';
import { createOpenAIProvider } from './openai.js';

let srv: OpenAIServer;
beforeAll(async () => void (srv = await startOpenAIServer()));
afterAll(() => srv.close());

/** How each recording's answer ended, as the provider meant it. */
const FINISH: Record<string, Finish> = {
  'alibaba-tool-call.chunks.txt': { kind: 'ok', reason: 'tool-calls' },
  'azure-model-router.chunks.txt': { kind: 'ok', reason: 'stop' },
  'deepseek-reasoning.chunks.txt': { kind: 'ok', reason: 'stop' },
  'deepseek-text-length.chunks.txt': { kind: 'ok', reason: 'length' },
  'deepseek-tool-call.chunks.txt': { kind: 'ok', reason: 'tool-calls' },
  'groq-reasoning-field.chunks.txt': { kind: 'ok', reason: 'stop' },
  'groq-text.chunks.txt': { kind: 'ok', reason: 'stop' },
  'groq-tool-call.chunks.txt': { kind: 'ok', reason: 'tool-calls' },
  'mistral-glm-incremental-tool-call.chunks.txt': { kind: 'ok', reason: 'tool-calls' },
  'mistral-magistral-parts.chunks.txt': { kind: 'ok', reason: 'stop' },
  'mistral-text.chunks.txt': { kind: 'ok', reason: 'stop' },
  'mistral-tool-call-no-index.chunks.txt': { kind: 'ok', reason: 'tool-calls' },
  'openai-max-tokens.sse': { kind: 'ok', reason: 'length' },
  'openai-n3-choices.sse': { kind: 'ok', reason: 'stop' },
  'openai-parallel-tool-calls.sse': { kind: 'ok', reason: 'tool-calls' },
  'openai-refusal.sse': { kind: 'ok', reason: 'refusal' },
  'openai-text.chunks.txt': { kind: 'ok', reason: 'stop' },
  'perplexity-text.chunks.txt': { kind: 'ok', reason: 'stop' },
  'xai-tool-call.chunks.txt': { kind: 'ok', reason: 'tool-calls' },
};

/** The body in pieces of 1–997 bytes (a fixed pattern), so frames, lines and UTF-8 sequences are cut anywhere. */
function pieces(body: Buffer): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0, i = 0; at < body.length; i++) {
    const size = 1 + ((i * 389) % 997);
    out.push(body.subarray(at, at + size));
    at += size;
  }
  return out;
}

const provider = () => createOpenAIProvider({ model: 'recorded', baseURL: srv.url, apiKey: 'sk-test' });

describe('recorded provider streams, replayed at the wire through the SDK', () => {
  test('every fixture has its expected ending written down', () => {
    expect(fixtureNames()).toEqual(Object.keys(FINISH).sort());
  });

  test.each(fixtureNames())('%s: the assembled answer is what the provider sent', async (name) => {
    const f = loadFixture(name);
    const said = whatItSays(f.payloads);
    expect(said.blocks.length).toBeGreaterThan(0);
    srv.enqueue(streamReply(pieces(f.body).map(raw), { done: false }));
    const d = await run(provider());
    expect(d.problems).toEqual([]);
    // The response's first chunk is said first, bare: the step times it (ADR 0079).
    expect(d.chunks[0]).toEqual({ type: 'first-chunk' });
    expect(d.assembly.blocks).toEqual(said.blocks);
    expect(d.finish).toEqual(FINISH[name]);
    if (said.tokens) expect(d.assembly.usage).toMatchObject({ inputTokens: said.tokens.input, outputTokens: said.tokens.output });
  });
});
