import { describe, expect, it } from 'vitest';
import { closeOrphanCompaction } from '../log/context/orphan.js';
import { planRepair } from '../log/repair.js';
import { LogBuilder } from '../test/helpers/log-builder.js';
import { segmentsOf } from './segments.js';

describe('segmentsOf', () => {
  it('one process: one segment after session/start', () => {
    const es = new LogBuilder().cleanTurn().entries;
    expect(segmentsOf(es)).toEqual([{ from: 1, to: es.length }]);
  });

  it('a crash repaired and resumed: the repair closes the first segment, the next starts after it', () => {
    const b = new LogBuilder().startTurn().startStep().answer('', [{ name: 'bash' }]).dispatch(1);
    const crashed = b.entries.length;
    const plan = planRepair(b.entries, { torn: { line: crashed + 1, text: '{"seq":9' } });
    if (!plan.ok) throw new Error('unrepairable');
    for (const d of plan.drafts) b.add(d);
    const after = b.entries.length;
    b.startTurn('carry on').startStep().answer('done').endStep().endTurn();
    expect(segmentsOf(b.entries)).toEqual([
      { from: 1, to: crashed, closing: plan.drafts },
      { from: after, to: b.entries.length },
    ]);
  });

  it('a turn/end with no checkpoint after it ends its process; a compaction closed on load belongs to the next session', () => {
    const b = new LogBuilder().cleanTurn();
    const ended = b.entries.length;
    b.add({ kind: 'compaction/start', trigger: 'manual', estimatedTokens: 5, window: 100 });
    const open = b.entries.length;
    for (const d of closeOrphanCompaction(b.entries)) b.add(d);
    b.cleanTurn();
    expect(segmentsOf(b.entries)).toEqual([
      { from: 1, to: ended },
      { from: ended, to: open },
      { from: open, to: b.entries.length },
    ]);
  });
});
