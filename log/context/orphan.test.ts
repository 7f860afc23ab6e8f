import { describe, expect, it } from 'vitest';
import { deriveMessages } from '../derive-messages.js';
import { closeOrphanCompaction, findOrphanCompaction, findOrphanCompactions } from './orphan.js';
import { LogBuilder } from './testing.js';

describe('orphan compaction brackets (I9)', () => {
  it('an unmatched compaction/start is found; closing it only appends, and the projection is unchanged', () => {
    const b = new LogBuilder();
    b.user('t1', 'go');
    b.step('t1', 1, { text: 'ok' });
    const start = b.add({ kind: 'compaction/start', trigger: 'manual', estimatedTokens: 123, window: 1000 });
    expect(findOrphanCompaction(b.entries)).toEqual(start);
    const before = deriveMessages(b.entries);
    const n = b.entries.length;
    const drafts = closeOrphanCompaction(b.entries);
    expect(drafts.map((d) => d.kind)).toEqual(['repair', 'compaction/end']);
    expect(drafts[0]).toMatchObject({ found: 'orphan-compaction' });
    expect(drafts[1]).toMatchObject({ outcome: 'interrupted', tokensBefore: 123 });
    drafts.forEach((d) => b.add(d));
    expect(b.entries.slice(0, n)).toHaveLength(n);
    expect(findOrphanCompaction(b.entries)).toBeUndefined();
    expect(findOrphanCompactions(b.entries)).toEqual([]);
    expect(closeOrphanCompaction(b.entries)).toEqual([]);
    expect(deriveMessages(b.entries)).toEqual(before);
  });

  it('finds an orphan followed by a complete pair', () => {
    const b = new LogBuilder();
    const a = b.add({ kind: 'compaction/start', trigger: 'manual', estimatedTokens: 1, window: 10 });
    b.add({ kind: 'compaction/start', trigger: 'manual', estimatedTokens: 1, window: 10 });
    b.add({ kind: 'compaction/end', outcome: 'nothing-to-do', tokensBefore: 1, tokensAfter: 1 });
    expect(findOrphanCompactions(b.entries)).toEqual([a]);
    expect(findOrphanCompaction(b.entries)).toBeUndefined();
  });
});
