/**
 * Drains a `ModelProvider` stream and checks the chunk protocol (I8):
 * exactly one `finish`, last; blocks opened before their deltas and closed
 * before the finish; a `first-chunk`, if any, once and first (ADR 0079);
 * `assembleAll` sees no violation. Test-framework free:
 * a test asserts `problems` is empty.
 */
import type { ModelProvider } from '../../ports/model.js';
import { assembleAll, type Assembly, type Chunk } from '../../log/chunks.js';
import type { Finish } from '../../log/entry-values.js';
import type { ModelRequest } from '../../log/messages.js';

export interface Drained {
  chunks: Chunk[];
  assembly: Assembly;
  finish: Finish | undefined;
  /** Protocol breaches; empty for a well-formed stream. */
  problems: string[];
  /** Set if iterating threw, which the port forbids. */
  thrown?: unknown;
}

export function checkChunks(chunks: readonly Chunk[]): string[] {
  const problems: string[] = [];
  const finishes = chunks.filter((c) => c.type === 'finish').length;
  if (finishes !== 1) problems.push(`expected exactly one finish, got ${finishes}`);
  if (chunks.length > 0 && chunks[chunks.length - 1]!.type !== 'finish') problems.push('the last chunk is not the finish');
  const firsts = chunks.filter((c) => c.type === 'first-chunk').length;
  if (firsts > 1) problems.push(`expected at most one first-chunk, got ${firsts}`);
  if (firsts === 1 && chunks[0]!.type !== 'first-chunk') problems.push('the first-chunk is not the first chunk');
  const open = new Set<number>();
  for (const c of chunks) {
    if (c.type === 'block-start') open.add(c.index);
    else if (c.type === 'block-end') open.delete(c.index);
    else if (c.type === 'finish' && open.size > 0) problems.push(`blocks ${[...open].join(', ')} still open at finish`);
  }
  problems.push(...assembleAll(chunks).violations);
  return problems;
}

/** Contract: never rejects; a throwing stream is reported in `thrown` and `problems`. */
export async function drain(stream: AsyncIterable<Chunk>): Promise<Drained> {
  const chunks: Chunk[] = [];
  let thrown: unknown;
  try {
    for await (const c of stream) chunks.push(c);
  } catch (err) {
    thrown = err;
  }
  const problems = checkChunks(chunks);
  if (thrown !== undefined) problems.unshift(`the stream threw: ${String(thrown)}`);
  const last = chunks[chunks.length - 1];
  return {
    chunks,
    assembly: assembleAll(chunks),
    finish: last?.type === 'finish' ? last.finish : undefined,
    problems,
    ...(thrown !== undefined ? { thrown } : {}),
  };
}

export const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'test-model',
  system: 'You are a test.',
  tools: [],
  messages: [{ role: 'user', content: 'hi' }],
  ...over,
});

/** `drain(provider.stream(request, signal))` with a fresh signal by default. */
export const run = (provider: ModelProvider, req: ModelRequest = request(), signal: AbortSignal = new AbortController().signal) =>
  drain(provider.stream(req, signal));
