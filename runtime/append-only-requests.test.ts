/**
 * Prompt caching depends on it (issue 21 item 3): outside compaction, each request a session sends is the
 * one before it with more appended — the projection's messages and, on the Responses wire, its input items.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { toResponsesInput } from '../adapters/model/openai-responses-wire.js';
import { toWireMessages } from '../adapters/model/openai-wire.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const extends_ = (prev: readonly unknown[], next: readonly unknown[]) => next.length > prev.length && JSON.stringify(next.slice(0, prev.length)) === JSON.stringify(prev);

describe('requests between compactions', () => {
  it('a 20-step session: every request extends the one before it, on the neutral messages and on both OpenAI wires; system and tools unchanged', async () => {
    h = createHarness((_req, i) =>
      i < 19
        ? { text: i % 3 === 0 ? `Step ${i}.` : '', toolCalls: [{ name: 'list_dir', arguments: {} }, ...(i % 2 ? [{ name: 'read_file', arguments: { path: `f${i}.txt` } }] : [])] }
        : { text: 'Done.' },
      { maxSteps: 30 },
    );
    const out = await h.session.run('walk the tree');
    expect(out.reason).toBe('completed');
    const reqs = h.requests.map((r) => r.request);
    expect(reqs).toHaveLength(20);
    for (let i = 1; i < reqs.length; i++) {
      const [a, b] = [reqs[i - 1]!, reqs[i]!];
      expect(extends_(a.messages, b.messages), `request ${i + 1}`).toBe(true);
      expect(extends_(toResponsesInput(a.messages), toResponsesInput(b.messages)), `request ${i + 1} (responses)`).toBe(true);
      expect(extends_(toWireMessages(a), toWireMessages(b)), `request ${i + 1} (chat)`).toBe(true);
      expect([b.system, b.tools, b.cacheKey]).toEqual([a.system, a.tools, a.cacheKey]);
    }
    expect(reqs[0]!.cacheKey).toBe('test-session');
  });
});
