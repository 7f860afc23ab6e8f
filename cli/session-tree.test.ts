import { describe, expect, it } from 'vitest';
import type { Entry } from '../log/entries.js';
import { childrenOf } from './session-tree.js';

// Only `kind` and `child` matter to the walk; the rest of an entry is left out.
const start = (child: string) => ({ kind: 'subagent/start', child }) as unknown as Entry;
const other = { kind: 'session/note' } as unknown as Entry;

describe('childrenOf', () => {
  it('walks the tree breadth first, each child once, a missing one left out', async () => {
    const logs: Record<string, Entry[]> = { a: [start('c'), start('a')], b: [start('d')], c: [], d: [] };
    const asked: string[] = [];
    const tree = await childrenOf([start('a'), other, start('b'), start('gone'), start('a')], async (id) => (asked.push(id), logs[id]));
    expect(asked).toEqual(['a', 'b', 'gone', 'c', 'd']);
    expect([...tree.keys()]).toEqual(['a', 'b', 'c', 'd']);
  });

  it('takes a child log of 200,000 entries (spreading them into the queue overflowed the stack)', async () => {
    const big = [...Array.from({ length: 200_000 }, () => other), start('leaf')];
    const tree = await childrenOf([start('big')], async (id) => (id === 'big' ? big : []));
    expect([...tree.keys()]).toEqual(['big', 'leaf']);
    expect(tree.get('big')).toHaveLength(200_001);
  });
});
