/**
 * An answer that grows past what one log entry may hold (issue #20 item 4: a
 * model streaming 300 MB became one line no reader takes back) is cut there
 * with the finish `OUTPUT_TOO_LARGE`, logged as cut, its stream stopped; the
 * log replays byte for byte. The default limit end to end, through the CLI:
 * test/fault/large-answer.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../adapters/model/scripted.js';
import type { Chunk } from '../log/chunks.js';
import type { EntryOf } from '../log/entries.js';
import { escapedBytes } from '../log/entry-size.js';
import type { ModelProvider } from '../ports/model.js';
import { replayThroughMachines } from '../replay/replay.js';
import { builtinTools } from '../tools/index.js';
import { requestText } from '../actors/compaction.js';
import { MAX_ANSWER_BYTES } from '../log/entry-size.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const LIMIT = 64 * 1024;

/** The scripted model, counting the chunks it got to yield: a stopped stream yields no more. */
function counted(text: string, deltas: number, withCall = false): { model: ModelProvider; yielded: () => number } {
  const inner = createScriptedProvider({ responses: [{ text, ...(withCall ? { toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] } : {}) }, { text: 'after' }] }, { deltas });
  let n = 0;
  return {
    yielded: () => n,
    model: {
      id: inner.id,
      async *stream(request, signal) {
        for await (const c of inner.stream(request, signal) as AsyncIterable<Chunk>) {
          n++;
          yield c;
        }
      },
    },
  };
}

const answers = (hh: Harness) => hh.entries().filter((e): e is EntryOf<'assistant/message'> => e.kind === 'assistant/message');

describe('an answer past the most one log entry may hold', () => {
  it('a model streaming far more text than the limit (10,000-character deltas) is cut OUTPUT_TOO_LARGE, logged as cut, its stream stopped, and the log replays', async () => {
    const m = counted('y'.repeat(2_000_000), 200);
    h = createHarness(m.model, { maxAnswerBytes: LIMIT });
    expect(await h.session.run('talk')).toMatchObject({ reason: 'error', code: 'OUTPUT_TOO_LARGE' });
    const [a] = answers(h);
    expect(a?.finish).toMatchObject({ kind: 'error', code: 'OUTPUT_TOO_LARGE' });
    const text = a?.blocks[0]?.type === 'text' ? a.blocks[0].text : '';
    // What was streamed before the delta that crossed the limit, whole deltas only.
    expect(text.length).toBeGreaterThan(0);
    expect(text.length % 10_000).toBe(0);
    expect(escapedBytes(text)).toBeLessThanOrEqual(LIMIT);
    // Stopped there: not the 200 deltas the model had.
    expect(m.yielded()).toBeLessThan(12);
    expect(h.entries().find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'error', code: 'OUTPUT_TOO_LARGE' });
    const replayed = await replayThroughMachines(h.entries(), builtinTools());
    expect(replayed.identical, replayed.note).toBe(true);
  });

  it('the limit is on the escaped size, not on characters: control characters count six bytes each', async () => {
    // 20,000 characters, 120,000 bytes on the line: over a 64 KiB limit.
    const m = counted('\u0001'.repeat(20_000), 20);
    h = createHarness(m.model, { maxAnswerBytes: LIMIT });
    expect(await h.session.run('talk')).toMatchObject({ reason: 'error', code: 'OUTPUT_TOO_LARGE' });
    const line = JSON.stringify(answers(h)[0]);
    expect(Buffer.byteLength(line)).toBeLessThan(LIMIT + 1024);
  });

  it('tool-call arguments count too: a call whose arguments pass the limit is dropped with the cut, never run half-streamed', async () => {
    const big = createScriptedProvider({ responses: [{ text: 'calling', toolCalls: [{ name: 'list_dir', arguments: { path: '.', pad: 'z'.repeat(200_000) } }] }] }, { deltas: 3 });
    h = createHarness(big, { maxAnswerBytes: LIMIT });
    expect(await h.session.run('go')).toMatchObject({ reason: 'error', code: 'OUTPUT_TOO_LARGE' });
    expect(h.entries().some((e) => e.kind === 'tool/call' || e.kind === 'tool/dispatch')).toBe(false);
    expect(answers(h)[0]?.blocks).toEqual([{ type: 'text', text: 'calling' }]);
    const replayed = await replayThroughMachines(h.entries(), builtinTools());
    expect(replayed.identical, replayed.note).toBe(true);
  });

  it('an answer within the limit is untouched', async () => {
    const m = counted('z'.repeat(50_000), 5);
    h = createHarness(m.model, { maxAnswerBytes: LIMIT });
    expect(await h.session.run('talk')).toMatchObject({ reason: 'completed' });
    expect(answers(h)[0]?.finish).toEqual({ kind: 'ok', reason: 'stop' });
  });

  it('a compaction summary past the limit fails OUTPUT_TOO_LARGE, its stream stopped, instead of becoming a compaction/summary line too long to read', async () => {
    const m = counted('s'.repeat(MAX_ANSWER_BYTES + 1_000_000), 100);
    const r = await requestText(m.model, { messages: [], tools: [], system: '', params: { model: 'm' } } as never, new AbortController().signal);
    expect(r).toMatchObject({ ok: false, code: 'OUTPUT_TOO_LARGE' });
    expect(m.yielded()).toBeLessThan(100);
  });
});
