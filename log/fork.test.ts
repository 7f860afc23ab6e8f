import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLog } from './parse.js';
import { forkOfLog, forkPoints, planFork, type ForkPlan, type ForkRefusal } from './fork.js';
import { verifyLog } from './verify.js';

const golden = (name: string) => {
  const text = fs.readFileSync(path.join(import.meta.dirname, '../test/golden', name), 'utf8');
  const lines = text.split('\n').slice(0, -1);
  return { entries: parseLog(text).entries, lines };
};
const NOW = '2026-12-02T00:00:00.000Z';
const plan = (name: string, o: { at?: number; answer?: string } = {}) => {
  const g = golden(name);
  return { g, p: planFork(g.entries, g.lines, { id: 'fork-1', now: NOW, ...o }) };
};
const ok = (p: ForkPlan | ForkRefusal): ForkPlan => {
  if (!('ok' in p)) throw new Error(`${p.code}: ${p.message}`);
  return p;
};

describe('planFork', () => {
  it('copies the log up to the last completed turn byte for byte except the first line', () => {
    for (const name of ['compaction.jsonl', 'crash-resume.jsonl', 'approvals.jsonl', 'ctrl-c.jsonl', 'flaky-checkout.jsonl', 'schedule.jsonl']) {
      const { entries, lines } = golden(name);
      for (const point of forkPoints(entries)) {
        const f = ok(planFork(entries, lines, { id: 'fork-1', now: NOW, at: point.seq }));
        expect(f.lines.slice(1)).toEqual(lines.slice(1, point.seq));
        expect(f.forkOf).toEqual({ session: (entries[0] as { id: string }).id, seq: point.seq });
        const head = JSON.parse(f.lines[0]!) as Record<string, unknown>;
        const orig = JSON.parse(lines[0]!) as Record<string, unknown>;
        expect(head).toEqual({ ...orig, at: NOW, id: 'fork-1', forkOf: f.forkOf });
        expect(verifyLog(parseLog(`${f.lines.join('\n')}\n`).entries).violations).toEqual([]);
      }
    }
  });

  it('a turn checkpoint goes with its turn/end; a point between turns takes the last turn that ended', () => {
    // compaction.jsonl: t1 ends at 20, its checkpoint is 21, a compaction between turns runs 22–26, t2 starts at 27.
    expect(ok(plan('compaction.jsonl', { at: 20 }).p).forkOf.seq).toBe(21);
    expect(ok(plan('compaction.jsonl', { at: 24 }).p).forkOf.seq).toBe(21);
    expect(ok(plan('compaction.jsonl').p).forkOf.seq).toBe(57);
    // Before any turn ended: the header alone.
    expect(ok(plan('approvals.jsonl', { at: 2 }).p).lines).toHaveLength(1);
  });

  it('a fork point inside a turn is refused naming the nearest valid points', () => {
    const { p } = plan('compaction.jsonl', { at: 33 });
    expect(p).toMatchObject({ code: 'FORK_INSIDE_TURN', nearest: [{ seq: 21, after: 't1' }, { seq: 39, after: 't2' }] });
    expect((p as ForkRefusal).message).toBe('the fork point seq 33 is inside turn t2 (it began at seq 27); fork at seq 21 (after t1) or seq 39 (after t2)');
    expect(plan('approvals.jsonl', { at: 3 }).p).toMatchObject({ code: 'FORK_INSIDE_TURN', nearest: [{ seq: 1, after: null }, { seq: 33, after: 't1' }] });
    expect(plan('approvals.jsonl', { at: 99 }).p).toMatchObject({ code: 'FORK_NO_SUCH_SEQ' });
  });

  it('--answer deny re-answers one logged approval: cut just before it, the denial at its seq', () => {
    // approvals.jsonl seq 25: a person allowed `echo hello` (t1.s3.c1) always.
    const { g, p } = plan('approvals.jsonl', { at: 25, answer: 'deny' });
    const f = ok(p);
    expect(f.lines.slice(1, -1)).toEqual(g.lines.slice(1, 24));
    expect(f.entries.at(-1)).toMatchObject({ seq: 25, kind: 'approval/decided', callId: 't1.s3.c1', outcome: 'rejected', by: 'fork' });
    expect(f.forkOf.seq).toBe(24);
    expect(f).not.toHaveProperty('asks');
    expect(verifyLog(f.entries, { allowOpenTail: true }).open?.calls).toMatchObject([{ callId: 't1.s3.c1', dispatched: false, awaitingApproval: false }]);
  });

  it('a what-if approve at the owner\'s rejection is never an approval by itself: the fork ends with the call asked and unanswered (ADR 0038)', () => {
    // approvals.jsonl seq 18: a person said no to `touch` (t1.s2.c1); seq 17 asked it.
    const { g, p } = plan('approvals.jsonl', { at: 18, answer: 'approve' });
    const f = ok(p);
    expect(f.lines.slice(1)).toEqual(g.lines.slice(1, 17));
    expect(f.entries.at(-1)).toMatchObject({ seq: 17, kind: 'approval/asked', callId: 't1.s2.c1' });
    expect(f.entries.some((e) => e.kind === 'approval/decided' && e.callId === 't1.s2.c1')).toBe(false);
    expect(f.forkOf.seq).toBe(17);
    expect(f.asks).toBe('t1.s2.c1');
    const v = verifyLog(f.entries, { allowOpenTail: true });
    expect(v.ok).toBe(true);
    // Open and waiting on its question: whoever may approve where the fork goes on is asked.
    expect(v.open?.calls).toMatchObject([{ callId: 't1.s2.c1', dispatched: false, awaitingApproval: true }]);
    expect(v.open?.calls[0]).not.toHaveProperty('answer');
    for (const yes of ['allow', 'Yes', 'allowed-once']) expect(ok(plan('approvals.jsonl', { at: 18, answer: yes }).p).lines).toEqual(f.lines);
    expect(plan('approvals.jsonl', { at: 18, answer: 'maybe' }).p).toMatchObject({ code: 'FORK_BAD_ANSWER' });
    expect(plan('approvals.jsonl', { at: 19, answer: 'approve' }).p).toMatchObject({ code: 'FORK_NOT_AN_ANSWER' });
  });

  it('--answer replaces one logged input, found from the turn that took it; one that arrived inside a turn is refused', () => {
    for (const at of [2, 3, 4]) {
      const f = ok(plan('approvals.jsonl', { at, answer: 'write a poem' }).p);
      expect(f.lines).toHaveLength(2);
      expect(f.entries[1]).toMatchObject({ seq: 2, kind: 'session/input', mode: 'followup', text: 'write a poem', origin: 'user' });
    }
    // compaction.jsonl seq 4: a followup that arrived while t1 ran.
    expect(plan('compaction.jsonl', { at: 4, answer: 'x' }).p).toMatchObject({ code: 'FORK_INSIDE_TURN' });
  });

  it('--answer approve or deny at a seq that is not an approval/decided is refused saying what is there, not written as an input "approve"', () => {
    for (const [at, what] of [[2, 'a session/input ("write a note")'], [3, 'a turn/start (t1, "write a note")'], [4, 'a user/message ("write a note")']] as const) {
      for (const answer of ['approve', 'deny', 'Yes']) {
        const p = plan('approvals.jsonl', { at, answer }).p as ForkRefusal;
        expect(p.code).toBe('FORK_NOT_AN_ANSWER');
        expect(p.message).toBe(`seq ${at} is ${what}, not an approval/decided: --answer ${answer} re-answers an approval (this log's approval answers are at seq 18, 25); to replace an input with that word, write it otherwise (e.g. "${answer}.")`);
      }
    }
    // The same word written otherwise is input text, as any other.
    expect(ok(plan('approvals.jsonl', { at: 2, answer: 'approve.' }).p).entries[1]).toMatchObject({ kind: 'session/input', text: 'approve.' });
  });

  it('a fork of a fork names its own parent', () => {
    const f = ok(plan('schedule.jsonl').p);
    const again = ok(planFork(f.entries, f.lines, { id: 'fork-2', now: NOW }));
    expect(forkOfLog(again.entries)).toEqual({ session: 'fork-1', seq: 25 });
    expect(again.lines.slice(1)).toEqual(f.lines.slice(1));
  });
});
