/**
 * How verdicts combine. Pure, so the one safety property that matters here —
 * a deny is never reversed (I6) — is a property of a function, tested over
 * generated orderings, not of the order in which listeners happen to run.
 */
import type { Decision } from '../../ports/approval.js';
import type { PostDecision, PreStepDecision } from '../../ports/hooks.js';



const RANK: Record<Decision['kind'], number> = { allow: 0, ask: 1, deny: 2 };

/** Contract: pure; returns the stricter of the two (deny > ask > allow); on a tie, the first, so the earliest reason is kept. */
export function stricter(a: Decision, b: Decision): Decision {
  return RANK[b.kind] > RANK[a.kind] ? b : a;
}

/**
 * Contract: pure. The result is as strict as the strictest input: any deny
 * gives a deny (with the first deny's reason), else any ask gives an ask,
 * else allow. The kind does not depend on the order of the inputs, and
 * adding inputs can only make it stricter.
 */
export function combineDecisions(decisions: readonly Decision[]): Decision {
  return decisions.reduce<Decision>(stricter, { kind: 'allow' });
}

/** Contract: pure; a block wins over an accept, the first block's feedback is kept. */
export function stricterPost(a: PostDecision, b: PostDecision): PostDecision {
  return a.kind === 'block' ? a : b;
}

/** Contract: pure; a reject from further down the chain stays a reject. */
export function stricterPreStep(own: PreStepDecision, downstream: PreStepDecision): PreStepDecision {
  return downstream.kind === 'reject' ? downstream : own;
}

export const isDecision = (v: unknown): v is Decision => {
  const d = v as Decision | null | undefined;
  return d?.kind === 'allow' || ((d?.kind === 'deny' || d?.kind === 'ask') && typeof d.reason === 'string');
};

export const isPostDecision = (v: unknown): v is PostDecision => {
  const d = v as PostDecision | null | undefined;
  return d?.kind === 'accept' || (d?.kind === 'block' && typeof d.feedback === 'string');
};

export const isPreStepDecision = (v: unknown): v is PreStepDecision => {
  const d = v as PreStepDecision | null | undefined;
  return (d?.kind === 'enter' && typeof d.text === 'string') || (d?.kind === 'reject' && typeof d.reason === 'string');
};
