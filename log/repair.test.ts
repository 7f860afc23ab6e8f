import { describe, expect, it } from 'vitest';
import { LogBuilder } from '../test/helpers/log-builder.js';
import { closeOpenTurnNow } from './close-now.js';
import type { Draft, Entry, EntryOf } from './entries.js';
import { planRepair } from './repair.js';
import { verifyLog } from './verify.js';

/** Applies a plan's drafts to the builder's log, so the result can be verified. */
function repaired(b: LogBuilder, drafts: Draft[]): Entry[] {
  for (const d of drafts) b.add(d);
  return b.entries;
}
const plan = (b: LogBuilder, opts = {}) => {
  const p = planRepair(b.entries, opts);
  if (!p.ok) throw new Error(JSON.stringify(p.violations));
  return p;
};
const shape = (d: Draft) =>
  d.kind === 'tool/result' ? `${d.kind} ${d.callId} ${d.status} ${d.code}` : d.kind === 'turn/end' || d.kind === 'step/end' ? `${d.kind} ${d.reason}` : d.kind === 'repair' ? `repair ${d.found}` : d.kind;

describe('planRepair', () => {
  it('leaves a clean log alone', () => {
    expect(plan(new LogBuilder().cleanTurn()).drafts).toEqual([]);
  });

  it('a torn tail is reported; nothing else is touched', () => {
    const p = plan(new LogBuilder().cleanTurn(), { torn: { line: 14, text: '{"seq":14,"at":"20' } });
    expect(p.drafts.map(shape)).toEqual(['repair torn-tail']);
    expect(p.report.torn).toEqual({ line: 14, bytes: 18 });
  });

  it('a crash during a tool: unknown outcome for the running call, not started for the next; step and turn closed (I5)', () => {
    const b = new LogBuilder().cleanTurn().startTurn().startStep().answer('two commands', [{ name: 'bash' }, { name: 'bash' }]).dispatch(1);
    const p = plan(b);
    expect(p.drafts.map(shape)).toEqual([
      'repair open-turn',
      'tool/result t2.s1.c1 unknown TOOL_OUTCOME_UNKNOWN',
      'tool/result t2.s1.c2 aborted TOOL_NOT_STARTED',
      'step/end interrupted',
      'turn/end interrupted',
    ]);
    expect(p.report).toMatchObject({ turn: 't2', step: 't2.s1', notStarted: ['t2.s1.c2'], outcomeUnknown: [{ callId: 't2.s1.c1', name: 'bash', idempotent: false }] });
    const unknown = p.drafts[1] as EntryOf<'tool/result'>;
    expect(unknown.content).toMatch(/read-only or idempotent/);
    expect(unknown.content).toMatch(/check the current state first/);
    expect(unknown.content).toMatch(/not idempotent/);
    const after = repaired(b, p.drafts);
    expect(verifyLog(after).violations).toEqual([]);
    expect(after.at(-1)).toMatchObject({ kind: 'turn/end', reason: 'interrupted', steps: 1 });
    // Repair is idempotent: a repaired log needs nothing more.
    expect(planRepair(after)).toMatchObject({ ok: true, drafts: [] });
  });

  it("a child whose bracket a cancel closed is named for repair: its own turn may still have been ending when the process died (it was left open)", () => {
    const b = new LogBuilder().startTurn().startStep().answer('', [{ name: 'workflow' }]).dispatch(1);
    b.add({ kind: 'subagent/start', callId: 't1.s1.c1', child: 's.t1.s1.c1.a1', depth: 1, mode: 'spawn' });
    b.add({ kind: 'subagent/start', callId: 't1.s1.c1', child: 's.t1.s1.c1.a2', depth: 1, mode: 'spawn' });
    b.add({ kind: 'subagent/end', callId: 't1.s1.c1', child: 's.t1.s1.c1.a2', reason: 'completed' });
    b.add({ kind: 'subagent/end', callId: 't1.s1.c1', child: 's.t1.s1.c1.a1', reason: 'aborted', code: 'ABORTED' });
    const p = plan(b);
    expect(p.report.cancelled).toEqual(['s.t1.s1.c1.a1']);
    // Its bracket is closed: nothing of the parent is closed for it.
    expect(p.report.subagents).toEqual([]);
    expect(verifyLog(repaired(b, p.drafts)).violations).toEqual([]);
  });

  it('an answer whose tool/call entries were never written: repair logs the calls, then says they did not start', () => {
    const b = new LogBuilder().startTurn().startStep().answer('', [{ name: 'read_file' }, { name: 'bash' }], 1);
    const p = plan(b);
    expect(p.drafts.map(shape)).toEqual([
      'repair open-turn',
      'tool/call',
      'tool/result t1.s1.c1 aborted TOOL_NOT_STARTED',
      'tool/result t1.s1.c2 aborted TOOL_NOT_STARTED',
      'step/end interrupted',
      'turn/end interrupted',
    ]);
    expect(p.report.unlogged).toEqual(['t1.s1.c2']);
    expect(verifyLog(repaired(b, p.drafts)).violations).toEqual([]);
  });

  it('an approval that was never answered is closed as cancelled', () => {
    const b = new LogBuilder().startTurn().startStep().answer('', [{ name: 'bash' }]);
    b.add({ kind: 'approval/asked', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', name: 'bash', reason: 'runs commands' });
    const p = plan(b);
    expect(p.drafts.map(shape)).toContain('approval/decided');
    expect(verifyLog(repaired(b, p.drafts)).violations).toEqual([]);
  });

  it('a crash between steps or before the first step closes only the turn', () => {
    const b = new LogBuilder().startTurn().startStep().answer('', [{ name: 'bash' }]).dispatch(1).result(1).endStep('tool-calls');
    expect(plan(b).drafts.map(shape)).toEqual(['repair open-turn', 'turn/end interrupted']);
    const c = new LogBuilder().startTurn();
    const p = plan(c);
    expect(p.drafts.at(-1)).toMatchObject({ kind: 'turn/end', steps: 0 });
    expect(verifyLog(repaired(c, p.drafts)).violations).toEqual([]);
  });

  it('an unfinished compaction is closed as interrupted (I9)', () => {
    const b = new LogBuilder().cleanTurn();
    b.add({ kind: 'compaction/start', trigger: 'proactive', estimatedTokens: 900, window: 1000 });
    const p = plan(b);
    expect(p.drafts.map(shape)).toEqual(['repair orphan-compaction', 'compaction/end']);
    expect(verifyLog(repaired(b, p.drafts)).violations).toEqual([]);
  });

  it('refuses a defect before the open end, naming it', () => {
    const e = new LogBuilder().cleanTurn().startTurn().startStep().entries;
    e.splice(5, 1);
    const p = planRepair(e);
    expect(p.ok).toBe(false);
    if (!p.ok) expect(p.violations[0]).toMatchObject({ violation: 'seq-gap', seq: 7 });
  });

  it('closeAs: a second Ctrl-C closes the turn as aborted by the user', () => {
    const b = new LogBuilder().startTurn().startStep().answer('', [{ name: 'bash' }]).dispatch(1);
    const p = plan(b, { closeAs: { reason: 'aborted', cause: 'user' } });
    expect(p.drafts.at(-1)).toMatchObject({ kind: 'turn/end', reason: 'aborted', cause: 'user' });
  });
});

describe('closeOpenTurnNow', () => {
  it('appends the closing entries synchronously through the recorder, and nothing on a closed log', () => {
    const b = new LogBuilder().startTurn().startStep().answer('', [{ name: 'bash' }]).dispatch(1);
    const added = closeOpenTurnNow(b.recorder, { reason: 'aborted', cause: 'user' });
    expect(added.map((e) => e.kind)).toEqual(['repair', 'tool/result', 'step/end', 'turn/end']);
    expect(verifyLog(b.entries).violations).toEqual([]);
    expect(closeOpenTurnNow(b.recorder, { reason: 'aborted' })).toEqual([]);
  });
});
