/**
 * I1 over opaque reasoning (ADR 0044): what a reasoning wire is handed back is the logged block, payload and
 * all, and the header says which wire that is.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Chunk } from '../log/chunks.js';
import type { EntryOf } from '../log/entries.js';
import type { ModelProvider } from '../ports/model.js';
import { checkModelVisibleIsLogged, createHarness, type Harness } from '../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const item = (n: number) => ({ id: `rs_${n}`, type: 'reasoning', summary: [{ type: 'summary_text', text: `step ${n}` }], encrypted_content: `enc-${n}` });

/** A reasoning wire's stand-in: each answer opens with a reasoning block carrying its item; the first two call list_dir. */
function reasoningModel(): ModelProvider {
  let n = 0;
  return {
    id: 'fake-responses',
    reasoning: 'openai-responses',
    async *stream(): AsyncGenerator<Chunk> {
      n++;
      yield { type: 'block-start', index: 0, block: { type: 'reasoning' } };
      yield { type: 'reasoning-delta', index: 0, text: `step ${n}` };
      yield { type: 'block-end', index: 0, opaque: { provider: 'openai-responses', data: item(n) } };
      if (n < 3) {
        yield { type: 'block-start', index: 1, block: { type: 'tool-call', id: `call_${n}`, name: 'list_dir' } };
        yield { type: 'tool-call-delta', index: 1, argumentsDelta: '{}' };
        yield { type: 'block-end', index: 1 };
        yield { type: 'finish', finish: { kind: 'ok', reason: 'tool-calls' } };
      } else {
        yield { type: 'block-start', index: 1, block: { type: 'text' } };
        yield { type: 'text-delta', index: 1, text: 'done' };
        yield { type: 'block-end', index: 1 };
        yield { type: 'finish', finish: { kind: 'ok', reason: 'stop' } };
      }
    },
  };
}

describe('reasoning carried across steps', () => {
  it('model-visible ⟺ logged (I1) holds for reasoning blocks: each request carries every earlier step\'s item as logged', async () => {
    h = createHarness(reasoningModel());
    const out = await h.session.run('look around');
    expect(out.reason).toBe('completed');
    expect(checkModelVisibleIsLogged(h)).toEqual([]);
    const third = h.requests[2]!.request.messages.filter((m) => m.role === 'assistant');
    expect(third.map((m) => (m.role === 'assistant' ? m.carried : undefined))).toEqual([
      [{ text: 'step 1', provider: 'openai-responses', data: item(1) }],
      [{ text: 'step 2', provider: 'openai-responses', data: item(2) }],
    ]);
    const logged = h.entries().filter((e): e is EntryOf<'assistant/message'> => e.kind === 'assistant/message');
    expect(logged.map((e) => e.blocks[0])).toEqual([1, 2, 3].map((n) => ({ type: 'reasoning', text: `step ${n}`, provider: 'openai-responses', data: item(n) })));
    const header = h.entries().find((e): e is EntryOf<'request/header'> => e.kind === 'request/header')!;
    expect(header.params.reasoning).toBe('openai-responses');
    expect(header.droppedReasoning).toBeUndefined();
  });
});
