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

  it('each process that goes on with the log starts a segment at its session/reopen; a compaction closed on load belongs to it (ADR 0021)', () => {
    const b = new LogBuilder().cleanTurn();
    // The process stopped right after its turn/end, before the checkpoint; input arrived while the end was flushing.
    b.add({ kind: 'session/input', mode: 'followup', text: 'next', origin: 'user' });
    b.add({ kind: 'compaction/start', trigger: 'manual', estimatedTokens: 5, window: 100 });
    const reopened = b.entries.length;
    b.add({ kind: 'session/reopen', writer: { pid: 7, host: 'h' } });
    for (const d of closeOrphanCompaction(b.entries)) b.add(d);
    b.cleanTurn();
    expect(segmentsOf(b.entries)).toEqual([
      { from: 1, to: reopened },
      { from: reopened, to: b.entries.length },
    ]);
  });

  it('a torn tail is rebuilt from the repair entry\'s fields, not its prose', () => {
    const b = new LogBuilder().startTurn().startStep().answer('', [{ name: 'bash' }]).dispatch(1);
    const crashed = b.entries.length;
    const plan = planRepair(b.entries, { torn: { line: crashed + 1, text: '{"seq":99,"kind":"tool/res' } });
    if (!plan.ok) throw new Error('unrepairable');
    for (const d of plan.drafts) b.add({ ...d, ...(d.kind === 'repair' ? { detail: 'whatever a person reads here' } : {}) } as typeof d);
    const [first] = segmentsOf(b.entries);
    expect(first!.closing?.[0]).toMatchObject({ kind: 'repair', found: 'torn-tail', line: crashed + 1, bytes: 26 });
  });
});
