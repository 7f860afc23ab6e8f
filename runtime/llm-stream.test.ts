import { afterEach, describe, expect, it } from 'vitest';
import type { Chunk } from '../log/chunks.js';
import type { EntryOf } from '../log/entries.js';
import type { Plugin } from '../plugins/host.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const lastUserText = (messages: readonly { role: string; content?: unknown }[]) => String(messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');

/** A cache of fixed answers by the last user message: it answers a known request without calling next(). */
function cache(answers: Record<string, string>, hits: string[]): Plugin {
  return {
    name: 'answer-cache',
    apply(ctx) {
      ctx.hooks.on('llm/stream', async (p, next) => {
        const known = answers[lastUserText(p.request.messages)];
        if (known === undefined) return next();
        hits.push(known);
        return (async function* (): AsyncGenerator<Chunk> {
          yield { type: 'block-start', index: 0, block: { type: 'text' } };
          yield { type: 'text-delta', index: 0, text: known };
          yield { type: 'block-end', index: 0 };
          yield { type: 'finish', finish: { kind: 'ok', reason: 'stop' } };
        })();
      });
    },
  };
}

/** A pass-through listener: it calls next() and hands its stream on unchanged, counting what went by. */
const counter = (seen: string[]): Plugin => ({
  name: 'pass-through',
  apply(ctx) {
    ctx.hooks.on('llm/stream', async (p, next) => {
      seen.push(`${p.step}#${p.attempt}`);
      return next();
    });
  },
});

describe('the llm/stream hook wraps the model call', () => {
  it('a listener answers from a cache for a fixed request without calling next(), a pass-through listener handles the rest; the answer is still chunks, and still logged', async () => {
    const hits: string[] = [];
    const seen: string[] = [];
    h = createHarness(() => ({ text: 'from the model' }), { plugins: [counter(seen), cache({ 'what is 2+2?': 'four (cached)' }, hits)] });
    await h.session.run('what is 2+2?');
    await h.session.run('something new');
    const answers = h.entries().filter((e): e is EntryOf<'assistant/message'> => e.kind === 'assistant/message');
    expect(answers.map((a) => [a.blocks, a.finish])).toEqual([
      [[{ type: 'text', text: 'four (cached)' }], { kind: 'ok', reason: 'stop' }],
      [[{ type: 'text', text: 'from the model' }], { kind: 'ok', reason: 'stop' }],
    ]);
    expect(hits).toEqual(['four (cached)']);
    // The model was asked once: the cached request never reached it.
    expect(h.requests).toHaveLength(1);
    expect(seen).toEqual(['t1.s1#0', 't2.s1#0']);
  });

  it('a listener that throws ends the step in an UNKNOWN error, reported by name; the session goes on', async () => {
    h = createHarness(() => ({ text: 'fine' }), {
      plugins: [{ name: 'broken-cache', apply: (ctx) => void ctx.hooks.on('llm/stream', () => { throw new Error('cache offline'); }) }],
    });
    const out = await h.session.run('hi');
    expect(out).toMatchObject({ reason: 'error', code: 'UNKNOWN' });
    const e = h.entries();
    expect(e.find((x) => x.kind === 'hook/report')).toMatchObject({ hook: 'llm/stream', listener: 'broken-cache', problem: 'threw: cache offline' });
    expect(e.find((x): x is EntryOf<'assistant/message'> => x.kind === 'assistant/message')?.finish).toMatchObject({ kind: 'error', code: 'UNKNOWN' });
  });
});
