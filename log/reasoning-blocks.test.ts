/**
 * Opaque reasoning (ADR 0044): a reasoning block keeps the provider's item as received, through the chunk
 * protocol, the log's schema, replay's re-streaming and the projection; older blocks read as before.
 */
import { describe, expect, it } from 'vitest';
import { assembleAll, chunksOf, type Chunk } from './chunks.js';
import { deriveMessages } from './derive-messages.js';
import { Entry } from './entries.js';
import { parseLog } from './parse.js';

const at = '2026-01-01T00:00:00.000Z';
const item = { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Plan: list.' }], encrypted_content: 'gAAAAB…==' };

const answer = (blocks: unknown[], seq = 2) =>
  ({ seq, at, kind: 'assistant/message', turn: 't1', step: 't1.s1', blocks, finish: { kind: 'ok', reason: 'tool-calls' }, surfaceOp: 'append' }) as Entry;

describe('opaque reasoning blocks', () => {
  it('an adapter hands the payload over at block-end, and the block keeps it beside its summary text', () => {
    const chunks: Chunk[] = [
      { type: 'block-start', index: 0, block: { type: 'reasoning' } },
      { type: 'reasoning-delta', index: 0, text: 'Plan: list.' },
      { type: 'block-end', index: 0, opaque: { provider: 'openai-responses', data: item } },
      { type: 'block-start', index: 1, block: { type: 'tool-call', id: 'call_1', name: 'list_dir' } },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{}' },
      { type: 'block-end', index: 1 },
      { type: 'finish', finish: { kind: 'ok', reason: 'tool-calls' } },
    ];
    const a = assembleAll(chunks);
    expect(a.violations).toEqual([]);
    expect(a.blocks[0]).toEqual({ type: 'reasoning', text: 'Plan: list.', provider: 'openai-responses', data: item });
    // Replay re-streams it to the same block, payload and key order included.
    const again = assembleAll(chunksOf(a.blocks, a.finish!));
    expect(JSON.stringify(again.blocks)).toBe(JSON.stringify(a.blocks));
  });

  it('a payload on a block that is not reasoning is a violation, never a throw', () => {
    const a = assembleAll([
      { type: 'block-start', index: 0, block: { type: 'text' } },
      { type: 'block-end', index: 0, opaque: { provider: 'anthropic', data: {} } },
      { type: 'finish', finish: { kind: 'ok', reason: 'stop' } },
    ]);
    expect(a.blocks).toEqual([{ type: 'text', text: '' }]);
    expect(a.violations).toEqual(['opaque payload for block 0 that is not a reasoning block']);
  });

  it('the log reads old reasoning blocks (no provider) and new ones, and a line written is read back unchanged', () => {
    const old = answer([{ type: 'reasoning', text: 'hm' }, { type: 'tool-call', id: 'a', name: 'x', arguments: '{}' }]);
    const carried = answer([{ type: 'reasoning', text: 'Plan: list.', provider: 'openai-responses', data: item }, { type: 'tool-call', id: 'a', name: 'x', arguments: '{}' }], 3);
    expect(Entry.safeParse(old).success).toBe(true);
    expect(Entry.safeParse({ ...carried, blocks: [{ type: 'reasoning', text: '', provider: 'someone-else', data: {} }] }).success).toBe(false);
    const start = { seq: 1, at, kind: 'session/start', id: 's', cwd: '/w', model: 'm', depth: 0, parent: null, format: 1 };
    const text = [start, old, carried].map((e) => JSON.stringify(e)).join('\n') + '\n';
    const parsed = parseLog(text);
    expect(parsed.entries.map((e) => JSON.stringify(e)).join('\n') + '\n').toBe(text);
  });

  it('the projection passes every carried block to the model messages with its provider; plain reasoning stays text only', () => {
    const log = [
      { seq: 1, at, kind: 'user/message', turn: 't1', text: 'go', origin: 'user', surfaceOp: 'append' } as Entry,
      answer([
        { type: 'reasoning', text: 'a', provider: 'anthropic', data: { type: 'thinking', thinking: 'a', signature: 'sig' } },
        { type: 'reasoning', text: 'b' },
        { type: 'reasoning', text: 'Plan: list.', provider: 'openai-responses', data: item },
        { type: 'tool-call', id: 'a', name: 'x', arguments: '{}' },
      ]),
    ];
    const [, m] = deriveMessages(log);
    expect(m).toEqual({
      role: 'assistant',
      content: null,
      reasoning: 'abPlan: list.',
      carried: [
        { text: 'a', provider: 'anthropic', data: { type: 'thinking', thinking: 'a', signature: 'sig' } },
        { text: 'Plan: list.', provider: 'openai-responses', data: item },
      ],
      toolCalls: [{ id: 'a', name: 'x', arguments: '{}' }],
    });
  });
});
