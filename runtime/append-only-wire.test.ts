/**
 * Prompt caching, measured on the bytes each provider's SDK actually sends (issue 21 item 3): a 20-step
 * session through `openai-chat`, `openai-responses` and `anthropic` (the real provider and SDK, an
 * in-process fake of the wire). Outside compaction, every request body extends the one before it:
 * messages, input items, system and tools. On Anthropic's wire the `cache_control` marks move by design
 * (the newest block carries one), so the comparison leaves them out, and the marks are held to the API's
 * four and to places where a cache already is: the block the request before marked last is marked again,
 * so the cache it wrote is read whatever lies between (the API looks back only about 20 blocks from a mark).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedProviderFromFunction } from '../adapters/model/scripted.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';
import { WIRES, wireModel, type Wire } from '../test/helpers/wire-fake.js';
import { anthropicMarks, extendsPrefix, wireParts } from '../test/helpers/wire-prefix.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

/** 19 tool steps (one to six parallel calls each), then an answer in words. */
const twentySteps = () => createScriptedProviderFromFunction((_req, i) =>
  i < 19
    ? { text: i % 3 === 0 ? `Step ${i}.` : '', toolCalls: Array.from({ length: 1 + (i % 6) }, (_, n) => (n % 2 ? { name: 'read_file', arguments: { path: `f${i}-${n}.txt` } } : { name: 'list_dir', arguments: {} })), usage: { inputTokens: 100 + i, outputTokens: 10 } }
    : { text: 'Done.' },
);

describe.each(WIRES)('requests on the %s wire', (wire: Wire) => {
  it('a 20-step session: every request body extends the one before it outside compaction; system and tools unchanged', async () => {
    const w = wireModel(wire, twentySteps());
    h = createHarness(w.model, { maxSteps: 30 });
    const out = await h.session.run('walk the tree');
    expect(out.reason).toBe('completed');
    expect(w.bodies).toHaveLength(20);
    const parts = w.bodies.map((b) => wireParts(wire, b));
    for (let i = 1; i < parts.length; i++) {
      expect(extendsPrefix(parts[i - 1]!.conversation, parts[i]!.conversation), `request ${i + 1}`).toBe(true);
      expect(parts[i]!.head, `request ${i + 1}: system and tools`).toBe(parts[0]!.head);
    }
    if (wire === 'openai-responses') expect(w.bodies.every((b) => b.prompt_cache_key === 'test-session')).toBe(true);
  });
});

describe('Anthropic breakpoints', () => {
  it('at most four, on the tools, the system prompt and the newest block; and the block the request before marked last is marked again, so each request reads the cache the one before wrote', async () => {
    const w = wireModel("anthropic", twentySteps());
    h = createHarness(w.model, { maxSteps: 30 });
    expect((await h.session.run('walk the tree')).reason).toBe('completed');
    const marks = w.bodies.map(anthropicMarks);
    for (const [i, m] of marks.entries()) {
      expect(m.all.length, `request ${i + 1}`).toBeLessThanOrEqual(4);
      expect(m.all.slice(0, 2), `request ${i + 1}`).toEqual(['tools', 'system']);
      expect(m.all.at(-1), `request ${i + 1}`).toBe(m.newest);
      if (i > 0) expect(m.all, `request ${i + 1} reads the cache request ${i} wrote at ${marks[i - 1]!.newest}`).toContain(marks[i - 1]!.newest);
    }
  });
});
