/**
 * The chunk protocol every model adapter speaks, and the one reducer that
 * assembles chunks into an assistant message, for live runs and replay alike.
 *
 * A stream is: any number of `block-start` / `*-delta` / `block-end` and
 * `usage` chunks, then exactly one `finish`. A reasoning block's `block-end`
 * may carry the provider's opaque payload (`opaque`), known only once the
 * provider has sent the whole item or block (ADR 0044). A `first-chunk` says
 * the response's first chunk arrived (ADR 0079): a wire's mapper yields it,
 * bare, at its first event; the step's actor times it on the session's clock.
 */
import type { Block, Finish, ReasoningProvider, Usage } from './entry-values.js';

/** What a provider needs back of a reasoning block, exactly as it sent it. */
export interface OpaqueReasoning {
  provider: ReasoningProvider;
  data: unknown;
}

export type Chunk =
  | { type: 'block-start'; index: number; block: { type: 'text'; refusal?: true } | { type: 'reasoning' } | { type: 'tool-call'; id: string; name: string } }
  | { type: 'text-delta'; index: number; text: string }
  | { type: 'reasoning-delta'; index: number; text: string }
  | { type: 'tool-call-delta'; index: number; argumentsDelta: string }
  | { type: 'block-end'; index: number; opaque?: OpaqueReasoning }
  | { type: 'usage'; usage: Usage }
  /** `ms`: since the request went out, in whole ms; absent from a provider (the actor measures), present from replay (the log's). */
  | { type: 'first-chunk'; ms?: number }
  | { type: 'finish'; finish: Finish };

export interface Assembly {
  /** Blocks by stream index; holes are possible while streaming, never after `finish`. */
  readonly blocks: Block[];
  readonly open: ReadonlySet<number>;
  readonly usage?: Usage;
  /** Time to the response's first chunk, ms (ADR 0079): from the first timed `first-chunk`. */
  readonly firstChunkMs?: number;
  readonly finish?: Finish;
  /** Protocol violations seen (a delta for an unopened block, a chunk after finish); they never throw. */
  readonly violations: string[];
}

export const emptyAssembly = (): Assembly => ({ blocks: [], open: new Set(), violations: [] });

/**
 * Contract: pure and total — never throws; a chunk that breaks the protocol is
 * recorded in `violations` and otherwise ignored. Mutates nothing it is given.
 */
export function assembleBlocks(state: Assembly, chunk: Chunk): Assembly {
  if (state.finish) return { ...state, violations: [...state.violations, `${chunk.type} after finish`] };
  switch (chunk.type) {
    case 'block-start': {
      if (state.blocks[chunk.index] !== undefined) {
        return { ...state, violations: [...state.violations, `block ${chunk.index} started twice`] };
      }
      const blocks = state.blocks.slice();
      const b = chunk.block;
      blocks[chunk.index] =
        b.type === 'tool-call'
          ? callBlock(state.blocks, b.id, b.name)
          : b.type === 'text' && b.refusal
            ? { type: 'text', text: '', refusal: true }
            : { type: b.type, text: '' };
      const open = new Set(state.open).add(chunk.index);
      return { ...state, blocks, open };
    }
    case 'text-delta':
    case 'reasoning-delta':
    case 'tool-call-delta': {
      const want = chunk.type === 'text-delta' ? 'text' : chunk.type === 'reasoning-delta' ? 'reasoning' : 'tool-call';
      const cur = state.blocks[chunk.index];
      if (!cur || cur.type !== want || !state.open.has(chunk.index)) {
        return { ...state, violations: [...state.violations, `${chunk.type} for block ${chunk.index} that is not an open ${want} block`] };
      }
      const blocks = state.blocks.slice();
      blocks[chunk.index] =
        cur.type === 'tool-call'
          ? { ...cur, arguments: cur.arguments + (chunk as { argumentsDelta: string }).argumentsDelta }
          : { ...cur, text: cur.text + (chunk as { text: string }).text };
      return { ...state, blocks };
    }
    case 'block-end': {
      if (!state.open.has(chunk.index)) return { ...state, violations: [...state.violations, `block-end for block ${chunk.index} that is not open`] };
      const open = new Set(state.open);
      open.delete(chunk.index);
      if (!chunk.opaque) return { ...state, open };
      const cur = state.blocks[chunk.index]!;
      if (cur.type !== 'reasoning') return { ...state, open, violations: [...state.violations, `opaque payload for block ${chunk.index} that is not a reasoning block`] };
      const blocks = state.blocks.slice();
      blocks[chunk.index] = { type: 'reasoning', text: cur.text, provider: chunk.opaque.provider, data: chunk.opaque.data };
      return { ...state, blocks, open };
    }
    case 'usage':
      return { ...state, usage: chunk.usage };
    case 'first-chunk':
      if (chunk.ms === undefined) return state;
      if (state.firstChunkMs !== undefined) return { ...state, violations: [...state.violations, 'a second timed first-chunk'] };
      return { ...state, firstChunkMs: chunk.ms };
    case 'finish': {
      const blocks = state.blocks.filter((b): b is Block => b !== undefined);
      return { ...state, blocks, open: new Set(), finish: chunk.finish };
    }
  }
}

/**
 * A new call block whose id no earlier call of the answer has: two tool messages with one id would reach the
 * next request, and no provider can tell their results apart. A repeated id gets the first free `~2`, `~3`, …
 * suffix, and the block keeps the id it was sent with: deterministic (replay re-streams the sent id and gets
 * the same name back) and visible in the log.
 */
function callBlock(earlier: readonly (Block | undefined)[], id: string, name: string): Block {
  const taken = new Set(earlier.flatMap((b) => (b?.type === 'tool-call' ? [b.id] : [])));
  if (!taken.has(id)) return { type: 'tool-call', id, name, arguments: '' };
  let n = 2;
  while (taken.has(`${id}~${n}`)) n++;
  return { type: 'tool-call', id: `${id}~${n}`, name, arguments: '', renamedFrom: id };
}

/** Assembles a whole stream; used by replay and tests. */
export function assembleAll(chunks: Iterable<Chunk>): Assembly {
  let s = emptyAssembly();
  for (const c of chunks) s = assembleBlocks(s, c);
  return s;
}

/** The chunks that reproduce `blocks` exactly through `assembleBlocks`: how replay re-streams a recorded answer (its logged time to first chunk first). */
export function chunksOf(blocks: readonly Block[], finish: Finish, usage?: Usage, firstChunkMs?: number): Chunk[] {
  const out: Chunk[] = firstChunkMs !== undefined ? [{ type: 'first-chunk', ms: firstChunkMs }] : [];
  blocks.forEach((b, index) => {
    if (b.type === 'tool-call') {
      out.push({ type: 'block-start', index, block: { type: 'tool-call', id: b.renamedFrom ?? b.id, name: b.name } });
      if (b.arguments) out.push({ type: 'tool-call-delta', index, argumentsDelta: b.arguments });
    } else {
      out.push({ type: 'block-start', index, block: b.type === 'text' && b.refusal ? { type: 'text', refusal: true } : { type: b.type } });
      if (b.text) out.push({ type: b.type === 'text' ? 'text-delta' : 'reasoning-delta', index, text: b.text });
      if (b.type === 'reasoning' && b.provider !== undefined) {
        out.push({ type: 'block-end', index, opaque: { provider: b.provider, data: b.data } });
        return;
      }
    }
    out.push({ type: 'block-end', index });
  });
  if (usage) out.push({ type: 'usage', usage });
  out.push({ type: 'finish', finish });
  return out;
}
