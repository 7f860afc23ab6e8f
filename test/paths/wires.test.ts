/**
 * The path suite's streams on every provider (issue 21 item 5). The step machine's generated paths feed it
 * chunk sequences from a small alphabet (a text block, one or two tool calls, each finish); the providers
 * are not on those paths (the stream is a fake child). Here every distinct chunk sequence the paths use is
 * written as each wire's SSE (test/helpers/wire-fake.ts), parsed back frame by frame and read by that
 * provider's own stream mapper — `openai-chat`, `openai-responses`, `anthropic` — and must assemble to what
 * the path sent the machine: the same text and calls, in order, and the same finish. So each stream the
 * machine is proven against is one each wire can deliver, and each mapper delivers it unchanged.
 * An error or an abort reaches a mapper as the SDK's thrown error, so it is handed to `end` as the
 * providers hand it; a text block that never got a character is not on any wire.
 */
import { describe, expect, it } from 'vitest';
import { createAnthropicStreamMapper } from '../../adapters/model/anthropic-stream.js';
import { createResponsesStreamMapper } from '../../adapters/model/openai-responses-stream.js';
import { createStreamMapper } from '../../adapters/model/openai-stream.js';
import { assembleAll, type Chunk } from '../../log/chunks.js';
import type { Finish } from '../../log/entry-values.js';
import { encodeChunks, ssePayloads, WIRES, type Wire } from '../helpers/wire-fake.js';
import { discoverMachines, pathsOf } from './suite.js';

const step = (await discoverMachines()).find((m) => m.name === 'step')!;
const sequences = new Map<string, Chunk[]>();
for (const p of pathsOf(step)) {
  // One path may stream several answers (a retry after a failed one): each ends at its finish.
  let cs: Chunk[] = [];
  for (const s of p.steps) {
    if (s.event.type !== 'model.chunk.received') continue;
    cs.push(s.event.chunk as Chunk);
    if (cs.at(-1)!.type === 'finish') (sequences.set(JSON.stringify(cs), cs), (cs = []));
  }
  if (cs.length > 0) sequences.set(JSON.stringify(cs), cs);
}

function mapperOf(wire: Wire): { push(e: unknown): Chunk[]; end(f?: Finish): Chunk[] } {
  if (wire === 'anthropic') return createAnthropicStreamMapper();
  if (wire === 'openai-responses') return createResponsesStreamMapper() as never;
  return createStreamMapper() as never;
}

/**
 * What a stream comes to: its text, then its calls in order (a wire orders a block by its first content, so a
 * text whose first character comes after a call has started follows the call there), and its finish.
 */
function outcome(chunks: readonly Chunk[]) {
  const a = assembleAll(chunks);
  const text = a.blocks.flatMap((b) => (b.type === 'text' && b.text ? [{ text: b.text }] : []));
  const calls = a.blocks.flatMap((b) => (b.type === 'tool-call' ? [{ call: b.id, name: b.name, arguments: b.arguments || '{}' }] : []));
  return { blocks: [...text, ...calls], finish: a.finish, violations: a.violations };
}

it('the step paths use some streams', () => expect(sequences.size).toBeGreaterThan(5));

describe.each(WIRES)('the step machine’s streams through the %s stream mapper', (wire: Wire) => {
  it.each([...sequences.values()].map((cs, i) => ({ cs, name: `${i + 1}: ${cs.map((c) => c.type === 'finish' ? `finish ${c.finish.kind === 'ok' ? c.finish.reason : c.finish.kind === 'error' ? c.finish.code : 'aborted'}` : c.type).join(', ')}` })))('$name', ({ cs }) => {
    const finish = cs.find((c) => c.type === 'finish')?.finish;
    const thrown = finish && finish.kind !== 'ok' ? finish : undefined;
    // What the wire carries: everything up to the finish, and the finish itself when it is the stream's own.
    const onWire = cs.filter((c) => c.type !== 'finish' || !thrown);
    const mapper = mapperOf(wire);
    const out = ssePayloads(encodeChunks(wire, onWire)).flatMap((e) => mapper.push(e));
    out.push(...mapper.end(thrown));
    const want = outcome(cs);
    const got = outcome(out);
    expect(got.violations).toEqual([]);
    expect(got.blocks).toEqual(want.blocks);
    // A stream without a finish is not on the paths as a success: every mapper says the wire was cut.
    if (!want.finish) expect(got.finish).toMatchObject({ kind: 'error', code: 'TRANSPORT' });
    // Where a wire reads the ending by what the answer holds: the chat mapper takes a `stop` with calls for
    // `tool_calls` (servers disagree on which they send); the Responses API has no finish reason at all
    // (`response.completed`); on both, an answer with nothing in it is EMPTY_RESPONSE.
    else if (wire !== 'anthropic' && want.finish.kind === 'ok' && (want.finish.reason === 'stop' || want.finish.reason === 'tool-calls')) {
      const calls = want.blocks.some((b) => 'call' in b);
      const reason = wire === 'openai-responses' ? (calls ? 'tool-calls' : 'stop') : want.finish.reason === 'stop' && calls ? 'tool-calls' : want.finish.reason;
      expect(got.finish).toMatchObject(want.blocks.length === 0 ? { kind: 'error', code: 'EMPTY_RESPONSE' } : { kind: 'ok', reason });
    } else expect(got.finish).toEqual(want.finish);
  });
});
