/**
 * Stalled and hostile streams at the wire (real SDK, local SSE server): every
 * one ends in a normalized finish within its deadline — never a hang, never
 * a buffer that grows without bound. Deadlines here are short; nothing
 * waits long.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { run, type Drained } from '../../test/helpers/model-stream.js';
import { chunk, textChunks } from '../../test/helpers/openai-chunks.js';
import { type OpenAIServer, pause, raw, startOpenAIServer, type StreamItem, streamReply } from '../../test/helpers/openai-sse-server.js';
import { loadOpenAISdk } from './lazy-sdk.js';
import { createOpenAIProvider, type OpenAIProviderOptions } from './openai.js';
import { DEFAULT_STREAM_LIMITS, guardBody, resolveStreamLimits, StreamLimitError } from './openai-deadlines.js';

let srv: OpenAIServer;
// The SDK loads at the first request (ADR 0071): loaded here, so the timings below are the deadlines' alone.
beforeAll(async () => void (srv = await startOpenAIServer(), await loadOpenAISdk()));
afterAll(() => srv.close());
beforeEach(() => void srv.requests.splice(0));

const provider = (over: Partial<OpenAIProviderOptions> = {}) => createOpenAIProvider({ model: 'm', baseURL: srv.url, apiKey: 'sk-test', ...over });

function wellFormed(d: Drained): Drained {
  expect(d.problems).toEqual([]);
  return d;
}
/** Runs `fn` and returns how long it took, in ms. */
async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const v = await fn();
  return [v, performance.now() - t0];
}
const repeat = (n: number, items: StreamItem[]): StreamItem[] => Array.from({ length: n }, () => items).flat();
const HANG = 3_000;

describe('idle deadline: no data event for streamIdleMs ends the stream as TIMEOUT', () => {
  test('headers, then nothing', { timeout: HANG }, async () => {
    srv.enqueue(streamReply([pause(10_000)]));
    const [d, ms] = await timed(() => run(provider({ streamIdleMs: 150 })));
    expect(wellFormed(d).finish).toEqual({ kind: 'error', code: 'TIMEOUT', message: 'no data from the model for 150 ms (streamIdleMs)' });
    expect(ms).toBeLessThan(1_000);
  });

  test('no headers at all', { timeout: HANG }, async () => {
    srv.enqueue({ type: 'hang' });
    expect(wellFormed(await run(provider({ streamIdleMs: 150 }))).finish).toMatchObject({ kind: 'error', code: 'TIMEOUT' });
  });

  test('keep-alive comments forever do not reset it; the text before them is kept', { timeout: HANG }, async () => {
    srv.enqueue(streamReply([...textChunks('partial', { finish: null }), ...repeat(300, [raw(': ping\n\n'), pause(20)])]));
    const [d, ms] = await timed(() => run(provider({ streamIdleMs: 200 })));
    expect(wellFormed(d).finish).toMatchObject({ kind: 'error', code: 'TIMEOUT' });
    expect(d.assembly.blocks).toEqual([{ type: 'text', text: 'partial' }]);
    expect(ms).toBeLessThan(1_500);
  });

  test('a one-byte-at-a-time trickle that never completes a data event', { timeout: HANG }, async () => {
    const frame = `data: ${JSON.stringify(chunk({ content: 'slow' }))}\n\n`;
    srv.enqueue(streamReply([...Buffer.from(frame)].flatMap((b) => [raw(Uint8Array.of(b)), pause(15)])));
    expect(wellFormed(await run(provider({ streamIdleMs: 200 }))).finish).toMatchObject({ kind: 'error', code: 'TIMEOUT' });
  });

  test('data events that come in time never trip it', { timeout: HANG }, async () => {
    srv.enqueue(streamReply([...textChunks('a', { finish: null }), ...repeat(5, [pause(60), chunk({ content: 'b' })]), chunk({}, 'stop')]));
    const d = wellFormed(await run(provider({ streamIdleMs: 200 })));
    expect(d.finish).toEqual({ kind: 'ok', reason: 'stop' });
    expect(d.assembly.blocks).toEqual([{ type: 'text', text: 'abbbbb' }]);
  });
});

describe('total deadline', () => {
  test('a stream that keeps sending in time ends at streamTotalMs as TIMEOUT, text kept', { timeout: HANG }, async () => {
    srv.enqueue(streamReply([...textChunks('x', { finish: null }), ...repeat(300, [pause(30), chunk({ content: 'y' })])]));
    const [d, ms] = await timed(() => run(provider({ streamIdleMs: 200, streamTotalMs: 400 })));
    expect(wellFormed(d).finish).toEqual({ kind: 'error', code: 'TIMEOUT', message: 'the model stream ran past its total deadline of 400 ms (streamTotalMs)' });
    expect((d.assembly.blocks[0] as { text: string }).text).toMatch(/^xy+$/);
    expect(ms).toBeLessThan(1_500);
  });
});

describe('line cap: bytes without a newline are bounded', () => {
  test('megabytes without a newline end as TRANSPORT naming the cap, not as memory growth', { timeout: 10_000 }, async () => {
    const piece = 'a'.repeat(64 * 1024);
    srv.enqueue(streamReply([raw('data: {"id":"x","choices":[{"index":0,"delta":{"content":"'), ...Array.from({ length: 128 }, () => raw(piece))], { done: false }));
    const d = wellFormed(await run(provider({ maxLineBytes: 1024 * 1024 })));
    expect(d.finish).toEqual({ kind: 'error', code: 'TRANSPORT', message: 'a stream line passed 1048576 bytes without a newline (maxLineBytes)' });
  });

  test('the guard stops reading its source at the cap (an endless source is pulled only so far)', async () => {
    let pulls = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(c) {
        pulls++;
        c.enqueue(new Uint8Array(16 * 1024).fill(0x61));
      },
    });
    let tripped: StreamLimitError | undefined;
    const guarded = guardBody(endless, { ...DEFAULT_STREAM_LIMITS, maxLineBytes: 256 * 1024 }, { onTrip: (e) => (tripped = e) });
    const reader = guarded.stream.getReader();
    await expect((async () => { for (;;) if ((await reader.read()).done) return; })()).rejects.toBeInstanceOf(StreamLimitError);
    expect(tripped).toMatchObject({ limit: 'line', code: 'TRANSPORT' });
    expect(pulls).toBeLessThanOrEqual(256 / 16 + 2);
  });
});

describe('limits', () => {
  test('defaults are filled in one visible place, and the provider says which it uses', () => {
    expect(DEFAULT_STREAM_LIMITS).toEqual({ idleMs: 300_000, totalMs: 1_800_000, maxLineBytes: 4 * 1024 * 1024 });
    expect(resolveStreamLimits({})).toEqual(DEFAULT_STREAM_LIMITS);
    expect(resolveStreamLimits({ idleMs: 5, maxLineBytes: undefined })).toEqual({ ...DEFAULT_STREAM_LIMITS, idleMs: 5 });
    expect(provider({ streamIdleMs: 1000, streamTotalMs: 2000 }).limits).toEqual({ idleMs: 1000, totalMs: 2000, maxLineBytes: 4 * 1024 * 1024 });
  });

  test('an abort still ends as aborted, not TIMEOUT, with limits in force', { timeout: HANG }, async () => {
    srv.enqueue(streamReply([...textChunks('go', { finish: null }), pause(2_000)]));
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    expect(wellFormed(await run(provider({ streamIdleMs: 1_000 }), undefined, ac.signal)).finish).toEqual({ kind: 'aborted' });
  });
});
