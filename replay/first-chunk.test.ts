/**
 * The time to an answer's first chunk is an outcome (ADR 0079): a live run logs it from the session's clock, and
 * replay feeds the logged value back instead of timing anything, so the replayed log is the same bytes — for the
 * scripted model, and for a recorded OpenAI stream read by the real SDK through the chat wire's mapper.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIProvider } from '../adapters/model/openai.js';
import type { Entry } from '../log/entries.js';
import { verifyLog } from '../log/verify.js';
import { checkCheckpoints } from '../machines/session-fold.js';
import { loadFixture } from '../test/fixtures/provider-streams/load.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';
import { raw, startOpenAIServer, streamReply, type OpenAIServer } from '../test/helpers/openai-sse-server.js';
import { builtinTools } from '../tools/index.js';
import { replayThroughMachines } from './replay.js';

let h: Harness | undefined;
let srv: OpenAIServer;
beforeAll(async () => void (srv = await startOpenAIServer()));
afterAll(() => srv.close());
afterEach(() => {
  h?.cleanup();
  h = undefined;
});

/** A clock 40 ms on at every reading: any time the replay measured itself (its clock stands still) would differ. */
function fortyPerRead(): () => number {
  let t = Date.UTC(2026, 0, 1);
  return () => (t += 40);
}

const answers = (entries: readonly Entry[]) => entries.flatMap((e) => (e.kind === 'assistant/message' ? [e] : []));

async function expectReplays(entries: readonly Entry[]): Promise<void> {
  expect(verifyLog(entries, { checkpoints: checkCheckpoints }).violations).toEqual([]);
  const r = await replayThroughMachines(entries, builtinTools());
  if (!r.identical) {
    const i = r.firstDifference! - 1;
    expect({ line: i + 1, note: r.note, replayed: r.text.split('\n')[i] }).toEqual({ line: i + 1, note: r.note, replayed: r.original.split('\n')[i] });
  }
  expect(r.identical).toBe(true);
}

describe('time to first chunk: logged live, fed back by replay (ADR 0079)', () => {
  it('the scripted model: each answer logs it, a refused request (retried) has none; the log replays byte for byte', async () => {
    h = createHarness(
      (_r, i) => (i === 0 ? { error: { code: 'RATE_LIMIT' } } : i === 1 ? { toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] } : { text: 'nothing here' }),
      { clock: fortyPerRead() },
    );
    expect((await h.session.run('look around')).reason).toBe('completed');
    expect(h.entries().some((e) => e.kind === 'model/retry')).toBe(true);
    // The clock is read when the request goes out and when the first chunk comes: one reading apart.
    expect(answers(h.entries()).map((e) => e.firstChunkMs)).toEqual([40, 40]);
    await expectReplays(h.entries());
  });

  it('a recorded OpenAI stream through the SDK and the chat wire: its answer logs the time to its first chunk, and replays', async () => {
    srv.enqueue(streamReply([raw(loadFixture('groq-text.chunks.txt').body.toString('utf8'))], { done: false }));
    h = createHarness(createOpenAIProvider({ model: 'recorded', baseURL: srv.url, apiKey: 'sk-test' }), { clock: fortyPerRead() });
    expect((await h.session.run('say something')).reason).toBe('completed');
    const [answer] = answers(h.entries());
    expect(answer!.blocks.length).toBeGreaterThan(0);
    expect(answer!.firstChunkMs).toBe(40);
    await expectReplays(h.entries());
  });
});
