/** What a Ralph round's worker and a verifier agent are told: the immutable objective, the round and its cap, the handoff; nothing of any conversation. */
import type { Handoff } from '../../log/entries-ralph.js';

export function roundPrompt(objective: string, round: number, rounds: number, handoff: Handoff | undefined): string {
  return [
    `You are round ${round} of at most ${rounds} of a Ralph loop: a fresh agent with no memory of earlier rounds. The workspace is as the earlier rounds left it; the handoff below is all that reaches you of them.`,
    '',
    'Objective (the same for every round):',
    objective,
    '',
    handoff ? `Handoff from round ${round - 1}:\n${JSON.stringify(handoff, null, 2)}` : 'Handoff: none, this is the first round.',
    '',
    'Make progress on the objective. End your round by calling the handoff tool once: status "complete" only when the objective is met (an independent check will test that claim against the workspace before it is accepted), "blocked" when you cannot go on (say why in blockerText), else "continue"; summary and evidence for what you did and what shows it; nextSteps for the next round.',
  ].join('\n');
}

export function verifierPrompt(objective: string, round: number, claim: Handoff): string {
  return [
    `You are an independent verifier. Round ${round} of a Ralph loop claims the objective below is met. Check the claim against the workspace itself with your read-only tools; do not trust the claim.`,
    '',
    'Objective:',
    objective,
    '',
    `The claim:\n${JSON.stringify({ summary: claim.summary, evidence: claim.evidence }, null, 2)}`,
    '',
    'Then call the verdict tool once: verified or not, the evidence you observed, and the workspace paths you read that show it.',
  ].join('\n');
}
