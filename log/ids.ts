/**
 * The grammar of the ids a log carries, said once: every id is built and read here, and nowhere else
 * (the architecture test holds the rule). A turn is `t3`, its steps `t3.s2`, a step's calls `t3.s2.c1`
 * (numbered from 1, in the order the answer lists them), a turn's budget questions `t3.budget1`. A child
 * session is named after its parent and the call that started it: `<parent>.t3.s2.c1` for a delegated
 * task, `<parent>.t3.s2.c1.a2` for a workflow's second agent; a Ralph round is `<session>.r4` (`-2` for
 * its second attempt) and its verifier `<session>.r4.verifier`.
 */

export const TURN_ID = /^t\d+$/;
export const STEP_ID = /^t\d+\.s\d+$/;
export const CALL_ID = /^t\d+\.s\d+\.c\d+$/;

/** The turn numbered `n` (from 1). */
export const nthTurn = (n: number): string => `t${n}`;

/** The step numbered `n` (from 1) of a turn. */
export const nthStep = (turn: string, n: number): string => `${turn}.s${n}`;

/** The `k`th call (from 1) of a step. */
export const nthCall = (step: string, k: number): string => `${step}.c${k}`;

/** The question's id, as an approval request carries it: the turn and which budget question of it (`t3.budget2`). */
export const budgetQuestionId = (turn: string, n: number): string => `${turn}.budget${n}`;

/** Whether an approval request's id names one of the turn's budget questions. */
export const isBudgetQuestionOf = (id: string, turn: string): boolean => id.startsWith(`${turn}.budget`);

/** The turn a step's, a call's or a budget question's id belongs to (`t3.s2.c1` → `t3`). */
export const turnOf = (id: string): string => {
  const dot = id.indexOf('.');
  return dot < 0 ? id : id.slice(0, dot);
};

/** The step a call belongs to (`t3.s2.c1` → `t3.s2`). */
export const stepOf = (call: string): string => call.slice(0, call.lastIndexOf('.c'));

/** A step's number within its turn (`t3.s2` → 2). */
export const stepNumber = (step: string): number => Number(step.slice(step.lastIndexOf('.s') + 2));

/** The last part of an id, for a line a person reads (`t3.s2.c1` → `c1`). */
export const shortId = (id: string): string => id.slice(id.lastIndexOf('.') + 1);

/** The session a delegated task runs in: the parent's id and the call that asked for it. */
export const childSessionId = (parent: string, call: string): string => `${parent}.${call}`;

/** The session a workflow's `n`th agent (from 1) runs in. */
export const workflowAgentSessionId = (parent: string, call: string, n: number): string => `${parent}.${call}.a${n}`;

/** The session a Ralph round runs in; a round run again (after an interrupted attempt) gets a log of its own. */
export const ralphRoundSessionId = (session: string, round: number, attempt = 1): string => `${session}.r${round}${attempt > 1 ? `-${attempt}` : ''}`;

/** The session a Ralph round's verifier agent runs in; checked again, it gets a log of its own. */
export const ralphVerifierSessionId = (session: string, round: number, attempt = 1): string => `${session}.r${round}.verifier${attempt > 1 ? `-${attempt}` : ''}`;
