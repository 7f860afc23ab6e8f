import { describe, expect, it } from 'vitest';
import {
  budgetQuestionId,
  CALL_ID,
  nthCall,
  childSessionId,
  isBudgetQuestionOf,
  ralphRoundSessionId,
  ralphVerifierSessionId,
  shortId,
  STEP_ID,
  nthStep,
  stepNumber,
  stepOf,
  TURN_ID,
  nthTurn,
  turnOf,
  workflowAgentSessionId,
} from './ids.js';

describe('the ids of a log, built and read in one place', () => {
  it('a call id built from its turn and step reads back as them', () => {
    for (const [t, s, c] of [[1, 1, 1], [3, 12, 7], [104, 2, 31]] as const) {
      const turn = nthTurn(t);
      const step = nthStep(turn, s);
      const call = nthCall(step, c);
      expect([TURN_ID.test(turn), STEP_ID.test(step), CALL_ID.test(call)]).toEqual([true, true, true]);
      expect(stepOf(call)).toBe(step);
      expect(stepNumber(step)).toBe(s);
      expect(turnOf(call)).toBe(turn);
      expect(turnOf(step)).toBe(turn);
      expect(turnOf(turn)).toBe(turn);
      expect(shortId(call)).toBe(`c${c}`);
    }
    expect(nthCall(nthStep(nthTurn(3), 2), 1)).toBe('t3.s2.c1');
  });

  it('a budget question belongs to its turn and no other, and is no call id', () => {
    const q = budgetQuestionId('t3', 2);
    expect(q).toBe('t3.budget2');
    expect(turnOf(q)).toBe('t3');
    expect(isBudgetQuestionOf(q, 't3')).toBe(true);
    expect(isBudgetQuestionOf(q, 't30')).toBe(false);
    expect(CALL_ID.test(q)).toBe(false);
  });

  it('child sessions are named after the parent and the call that started them', () => {
    const call = 't3.s2.c1';
    expect(childSessionId('20261201-093012-a1b2c3', call)).toBe('20261201-093012-a1b2c3.t3.s2.c1');
    expect(workflowAgentSessionId('p', call, 2)).toBe('p.t3.s2.c1.a2');
    expect(ralphRoundSessionId('p', 4)).toBe('p.r4');
    expect(ralphRoundSessionId('p', 4, 2)).toBe('p.r4-2');
    expect(ralphVerifierSessionId('p', 4)).toBe('p.r4.verifier');
    expect(ralphVerifierSessionId('p', 4, 3)).toBe('p.r4.verifier-3');
  });

  it('the patterns refuse ids of the wrong shape', () => {
    expect(['t', 'T1', 't1.s1', ' t1'].some((x) => TURN_ID.test(x))).toBe(false);
    expect(['t1', 't1.s', 't1.c1', 't1.s1.c1'].some((x) => STEP_ID.test(x))).toBe(false);
    expect(['t1.s1', 't1.s1.c', 't1.s1.c1.a1', 't1.budget1'].some((x) => CALL_ID.test(x))).toBe(false);
  });
});
