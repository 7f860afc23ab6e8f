import { describe, expect, it } from 'vitest';
import type { Draft, Entry } from '../../log/entries.js';
import { verifyLog } from '../../log/verify.js';
import { afterRejection, checkCap, fit, nextStep, ralphState } from './state.js';

const log = (...drafts: Draft[]): Entry[] =>
  [{ kind: 'session/start', id: 'r', cwd: '/w', model: 'm', depth: 0, parent: null, format: 1 } as Draft, ...drafts].map((d, i) => ({ seq: i + 1, at: '2026-01-01T00:00:00.000Z', ...d }) as Entry);
const start: Draft = { kind: 'ralph/start', objective: 'o', rounds: 3, verify: 'npm test', verifier: false };
const h = (status: 'continue' | 'complete' | 'blocked', summary = 's') => ({ status, summary, evidence: 'e' });

describe('where a Ralph run stands, from its log', () => {
  it('goes round after round, checks a claim, ends verified, or out of rounds, or blocked', () => {
    expect(nextStep(ralphState(log(start))!)).toEqual({ kind: 'round', round: 1, attempt: 1 });
    const one = log(start, { kind: 'ralph/round', round: 1, attempt: 1, child: 'r.r1' }, { kind: 'ralph/handoff', round: 1, child: 'r.r1', reason: 'completed', source: 'tool', handoff: h('complete') });
    expect(nextStep(ralphState(one)!)).toEqual({ kind: 'check', round: 1, by: 'command', claim: h('complete') });
    const ok = log(...one.slice(1), { kind: 'ralph/verify', round: 1, by: 'command', command: 'npm test' }, { kind: 'ralph/verdict', round: 1, by: 'command', verified: true, output: 'fine', exitCode: 0 });
    expect(nextStep(ralphState(ok)!)).toEqual({ kind: 'end', outcome: 'verified', round: 1 });
    const no = log(...one.slice(1), { kind: 'ralph/verify', round: 1, by: 'command', command: 'npm test' }, { kind: 'ralph/verdict', round: 1, by: 'command', verified: false, output: 'FAIL b', exitCode: 1 });
    const next = nextStep(ralphState(no)!);
    expect(next).toMatchObject({ kind: 'round', round: 2, attempt: 1, handoff: { status: 'continue', summary: 's' } });
    expect((next as { handoff: { evidence: string } }).handoff.evidence).toContain('The --verify command said: FAIL b');
    expect(verifyLog(no).violations).toEqual([]);
    const blocked = log(start, { kind: 'ralph/round', round: 1, attempt: 1, child: 'r.r1' }, { kind: 'ralph/handoff', round: 1, child: 'r.r1', reason: 'completed', source: 'tool', handoff: { ...h('blocked'), blockerText: 'no disk' } });
    expect(nextStep(ralphState(blocked)!)).toEqual({ kind: 'end', outcome: 'blocked', round: 1, blockerText: 'no disk' });
    const rounds = [1, 2, 3].flatMap((n): Draft[] => [{ kind: 'ralph/round', round: n, attempt: 1, child: `r.r${n}` }, { kind: 'ralph/handoff', round: n, child: `r.r${n}`, reason: 'completed', source: 'last-text', handoff: h('continue') }]);
    expect(nextStep(ralphState(log(start, ...rounds))!)).toEqual({ kind: 'end', outcome: 'exhausted', round: 3 });
  });

  it('after a crash: an open round is closed and run again as a new attempt; an open check is closed and run again', () => {
    const open = log(start, { kind: 'ralph/round', round: 1, attempt: 1, child: 'r.r1' });
    expect(nextStep(ralphState(open)!)).toEqual({ kind: 'close-round', round: 1, child: 'r.r1' });
    const closed = log(...open.slice(1), { kind: 'ralph/handoff', round: 1, child: 'r.r1', reason: 'interrupted', source: 'interrupted', handoff: h('continue', '(interrupted)') });
    expect(nextStep(ralphState(closed)!)).toEqual({ kind: 'round', round: 1, attempt: 2 });
    const checking = log(start, { kind: 'ralph/round', round: 1, attempt: 1, child: 'r.r1' }, { kind: 'ralph/handoff', round: 1, child: 'r.r1', reason: 'completed', source: 'tool', handoff: h('complete') }, { kind: 'ralph/verify', round: 1, by: 'command', command: 'npm test' });
    expect(nextStep(ralphState(checking)!)).toEqual({ kind: 'close-check', round: 1, by: 'command' });
    const again = log(...checking.slice(1), { kind: 'ralph/verdict', round: 1, by: 'command', verified: false, code: 'INTERRUPTED', output: 'x' });
    expect(nextStep(ralphState(again)!)).toMatchObject({ kind: 'check', round: 1, by: 'command' });
    const cancelled = log(...closed.slice(1), { kind: 'ralph/end', outcome: 'cancelled', round: 0 });
    expect(nextStep(ralphState(cancelled)!)).toEqual({ kind: 'round', round: 1, attempt: 2 });
    expect(ralphState(log())).toBeUndefined();
  });

  it('a verifier log that breaks the order is refused by name', () => {
    const bad = log(start, { kind: 'ralph/handoff', round: 1, child: 'r.r1', reason: 'completed', source: 'tool', handoff: h('continue') });
    expect(verifyLog(bad).violations.map((v) => v.message)).toEqual(['a handoff of round 1 (r.r1), which is not the open round']);
  });

  it('caps the handoff: over 4 KB is refused for the child to fix; text the harness writes is cut to fit', () => {
    expect(checkCap(h('continue', 'x'.repeat(5000)))).toMatch(/^the handoff is 50\d\d bytes of JSON; the cap is 4096/);
    expect(checkCap(h('continue', 'short'))).toBeUndefined();
    const cut = fit(h('continue', '€'.repeat(3000)), 'summary');
    expect(Buffer.byteLength(JSON.stringify(cut))).toBeLessThanOrEqual(4096);
    expect(cut.summary.endsWith(' [cut to fit the handoff cap]')).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(afterRejection(h('complete'), 2, ['x'.repeat(9000)])))).toBeLessThanOrEqual(4096);
  });
});
