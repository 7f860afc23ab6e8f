import { describe, expect, it } from 'vitest';
import { assembleAll, assembleBlocks, chunksOf, emptyAssembly, type Chunk } from './chunks.js';

describe('assembleBlocks', () => {
  it('builds text, reasoning and interleaved tool calls by stream index', () => {
    const chunks: Chunk[] = [
      { type: 'block-start', index: 0, block: { type: 'reasoning' } },
      { type: 'reasoning-delta', index: 0, text: 'hm' },
      { type: 'block-start', index: 1, block: { type: 'tool-call', id: 'a', name: 'read_file' } },
      { type: 'block-start', index: 2, block: { type: 'tool-call', id: 'b', name: 'grep' } },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"pa' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: '{"pattern"' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: 'th":"x"}' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: ':"y"}' },
      { type: 'block-end', index: 0 },
      { type: 'block-end', index: 1 },
      { type: 'block-end', index: 2 },
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 4 } },
      { type: 'finish', finish: { kind: 'ok', reason: 'tool-calls' } },
    ];
    const a = assembleAll(chunks);
    expect(a.violations).toEqual([]);
    expect(a.blocks).toEqual([
      { type: 'reasoning', text: 'hm' },
      { type: 'tool-call', id: 'a', name: 'read_file', arguments: '{"path":"x"}' },
      { type: 'tool-call', id: 'b', name: 'grep', arguments: '{"pattern":"y"}' },
    ]);
    expect(a.usage).toEqual({ inputTokens: 3, outputTokens: 4 });
  });

  it('never throws on a broken protocol; records the violation', () => {
    let s = emptyAssembly();
    s = assembleBlocks(s, { type: 'text-delta', index: 5, text: 'x' });
    s = assembleBlocks(s, { type: 'finish', finish: { kind: 'ok', reason: 'stop' } });
    s = assembleBlocks(s, { type: 'text-delta', index: 0, text: 'late' });
    expect(s.violations).toHaveLength(2);
    expect(s.blocks).toEqual([]);
  });

  it('does not mutate the state it is given', () => {
    const s0 = assembleBlocks(emptyAssembly(), { type: 'block-start', index: 0, block: { type: 'text' } });
    const frozen = JSON.stringify(s0.blocks);
    assembleBlocks(s0, { type: 'text-delta', index: 0, text: 'x' });
    expect(JSON.stringify(s0.blocks)).toBe(frozen);
  });

  it('chunksOf re-streams recorded blocks to the same assembly (replay)', () => {
    const blocks = [
      { type: 'reasoning' as const, text: 'why' },
      { type: 'text' as const, text: 'say 🙂' },
      { type: 'tool-call' as const, id: 'c', name: 'bash', arguments: '{"command":"ls"}' },
      { type: 'tool-call' as const, id: 'd', name: 'list_dir', arguments: '' },
    ];
    const a = assembleAll(chunksOf(blocks, { kind: 'ok', reason: 'tool-calls' }, { inputTokens: 1, outputTokens: 2 }));
    expect(a.blocks).toEqual(blocks);
    expect(a.finish).toEqual({ kind: 'ok', reason: 'tool-calls' });
  });

  it('the time to first chunk (ADR 0079): a timed first-chunk sets it, a bare one does not, a second is a violation; chunksOf re-streams it first', () => {
    expect(assembleAll([{ type: 'first-chunk' }, { type: 'finish', finish: { kind: 'ok', reason: 'stop' } }]).firstChunkMs).toBeUndefined();
    const twice = assembleAll([{ type: 'first-chunk', ms: 12 }, { type: 'first-chunk', ms: 30 }, { type: 'finish', finish: { kind: 'ok', reason: 'stop' } }]);
    expect([twice.firstChunkMs, twice.violations]).toEqual([12, ['a second timed first-chunk']]);
    const blocks = [{ type: 'text' as const, text: 'hi' }];
    const again = chunksOf(blocks, { kind: 'ok', reason: 'stop' }, undefined, 340);
    expect(again[0]).toEqual({ type: 'first-chunk', ms: 340 });
    expect(assembleAll(again)).toMatchObject({ blocks, firstChunkMs: 340, violations: [] });
    expect(chunksOf(blocks, { kind: 'ok', reason: 'stop' }).some((c) => c.type === 'first-chunk')).toBe(false);
  });

  it('a refusal-marked text block survives assembly and replay with its mark', () => {
    const blocks = [{ type: 'text' as const, text: "I can't help with that.", refusal: true as const }];
    const a = assembleAll(chunksOf(blocks, { kind: 'ok', reason: 'refusal' }));
    expect(a.blocks).toEqual(blocks);
    expect(a.finish).toEqual({ kind: 'ok', reason: 'refusal' });
  });

  it('two tool calls with one id: the later one is renamed deterministically, the id it was sent with kept beside it', () => {
    const call = (index: number, id: string): Chunk => ({ type: 'block-start', index, block: { type: 'tool-call', id, name: 'ls' } });
    const a = assembleAll([call(0, 'c'), call(1, 'c'), call(2, 'c~2'), call(3, 'c'), { type: 'finish', finish: { kind: 'ok', reason: 'tool-calls' } }]);
    expect(a.blocks.map((b) => (b.type === 'tool-call' ? [b.id, b.renamedFrom] : []))).toEqual([
      ['c', undefined],
      ['c~2', 'c'],
      ['c~2~2', 'c~2'],
      ['c~3', 'c'],
    ]);
    // Replay re-streams the recorded blocks and gets the same ids back.
    const again = assembleAll(chunksOf(a.blocks, a.finish!));
    expect(again.blocks).toEqual(a.blocks);
  });
});
