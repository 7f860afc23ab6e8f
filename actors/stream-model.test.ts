/**
 * The time to a response's first chunk (ADR 0079), as the step's actor takes it: the session's clock read when the
 * request goes out and when the provider says the first chunk came; a time the provider brings (replay's, from the
 * log) passed on unread; nothing when nothing can time it. Hosts never see the marker.
 */
import { assign, createActor, setup, waitFor } from 'xstate';
import { describe, expect, it } from 'vitest';
import type { Chunk } from '../log/chunks.js';
import type { ModelProvider } from '../ports/model.js';
import { request } from '../test/helpers/model-stream.js';
import { streamModelActor } from './stream-model.js';

/** A clock the provider moves: `now` is what it reads, `reads` how often it was read. */
function handClock(start = 1_000) {
  const c = { now: start, reads: 0, clock: () => (c.reads++, c.now) };
  return c;
}

/** Runs the actor under a parent and gives back what it sent the step, and what it sent the hosts. */
async function collect(provider: ModelProvider, clock?: () => number): Promise<{ step: Chunk[]; hosts: Chunk[]; events: number }> {
  const hosts: Chunk[] = [];
  let events = 0;
  const parent = setup({
    types: { context: {} as { chunks: Chunk[] }, events: {} as { type: 'model.chunk.received'; chunk: Chunk; first?: Chunk } },
    actors: { streamModel: streamModelActor(provider, (c) => hosts.push(c), undefined, undefined, undefined, clock) },
  }).createMachine({
    context: { chunks: [] },
    invoke: { src: 'streamModel', input: { request: request(), step: 't1.s1', attempt: 1 } },
    on: {
      'model.chunk.received': {
        actions: assign({ chunks: ({ context, event }) => (events++, [...context.chunks, ...(event.first ? [event.first] : []), event.chunk]) }),
      },
    },
  });
  const actor = createActor(parent).start();
  const s = await waitFor(actor, (x) => x.context.chunks.some((c) => c.type === 'finish'));
  actor.stop();
  return { step: s.context.chunks, hosts, events };
}

const answer = (before: () => void, ...first: Chunk[]): ModelProvider => ({
  id: 'timed',
  async *stream() {
    await Promise.resolve();
    before();
    yield* first;
    yield { type: 'block-start', index: 0, block: { type: 'text' } };
    yield { type: 'text-delta', index: 0, text: 'hi' };
    yield { type: 'block-end', index: 0 };
    yield { type: 'finish', finish: { kind: 'ok', reason: 'stop' } };
  },
});

describe('streamModelActor times the first chunk (ADR 0079)', () => {
  it('a bare first-chunk gets the time since the request went out, on the injected clock; the hosts are not sent it', async () => {
    const c = handClock();
    const { step, hosts } = await collect(answer(() => (c.now += 250), { type: 'first-chunk' }), c.clock);
    expect(step[0]).toEqual({ type: 'first-chunk', ms: 250 });
    expect(step.filter((x) => x.type === 'first-chunk')).toHaveLength(1);
    expect(hosts.map((x) => x.type)).toEqual(['block-start', 'text-delta', 'block-end', 'finish']);
    expect(c.reads).toBe(2);
  });

  it('the timed first-chunk rides the next chunk’s event: a response of four chunks is four events to the step (ADR 0110)', async () => {
    const c = handClock();
    const { step, events } = await collect(answer(() => (c.now += 250), { type: 'first-chunk' }), c.clock);
    expect(step.map((x) => x.type)).toEqual(['first-chunk', 'block-start', 'text-delta', 'block-end', 'finish']);
    expect(events).toBe(4);
  });

  it('a first-chunk right before the finish rides the finish (an answer cut off before any block)', async () => {
    const c = handClock();
    const provider: ModelProvider = {
      id: 'bare',
      async *stream() {
        c.now += 30;
        yield { type: 'first-chunk' };
        yield { type: 'finish', finish: { kind: 'error', code: 'TRANSPORT', message: 'dropped' } };
      },
    };
    const { step, events } = await collect(provider, c.clock);
    expect(step).toEqual([{ type: 'first-chunk', ms: 30 }, { type: 'finish', finish: { kind: 'error', code: 'TRANSPORT', message: 'dropped' } }]);
    expect(events).toBe(1);
  });

  it('a first-chunk that brings its time (replay, from the log) is passed on as it is, the clock not read for it', async () => {
    const c = handClock();
    const { step } = await collect(answer(() => (c.now += 250), { type: 'first-chunk', ms: 7 }), c.clock);
    expect(step[0]).toEqual({ type: 'first-chunk', ms: 7 });
    expect(c.reads).toBe(1);
  });

  it('a time the log could not hold (negative, fractional, not a number) is measured instead', async () => {
    for (const ms of [-3, 1.5, Number.NaN]) {
      const c = handClock();
      const { step } = await collect(answer(() => (c.now += 40), { type: 'first-chunk', ms }), c.clock);
      expect(step[0]).toEqual({ type: 'first-chunk', ms: 40 });
    }
  });

  it('only the first counts: a later first-chunk says nothing', async () => {
    const c = handClock();
    const { step } = await collect(answer(() => (c.now += 5), { type: 'first-chunk' }, { type: 'first-chunk', ms: 99 }, { type: 'first-chunk' }), c.clock);
    expect(step.filter((x) => x.type === 'first-chunk')).toEqual([{ type: 'first-chunk', ms: 5 }]);
  });

  it('without a clock a bare first-chunk is dropped; a provider that says none gets none', async () => {
    expect((await collect(answer(() => {}, { type: 'first-chunk' }))).step.some((x) => x.type === 'first-chunk')).toBe(false);
    const c = handClock();
    expect((await collect(answer(() => (c.now += 5)), c.clock)).step.some((x) => x.type === 'first-chunk')).toBe(false);
  });
});
