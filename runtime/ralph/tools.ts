/**
 * The tools a Ralph run gives its children, one of each per child (scoped:
 * no tool filter hides them): `handoff`, through which a round's worker
 * ends its round, and `verdict`, through which a verifier agent answers.
 * Both are validated like any tool; a handoff over the cap is an error the
 * child must fix, never cut short.
 */
import { z } from 'zod';
import { Handoff, HANDOFF_CAP_BYTES, RalphCode } from '../../log/entries-ralph.js';
import type { ToolDefinition } from '../../ports/tools.js';
import { checkCap } from './state.js';

export interface Captured<T> {
  /** The last valid call's arguments, if any. */
  value?: T;
}

export function handoffTool(captured: Captured<Handoff>, cap = HANDOFF_CAP_BYTES): ToolDefinition<Handoff> {
  return {
    name: 'handoff',
    description: `End your round: what you claim (status "complete" only when the objective is met: an independent check will test the claim; "blocked" when you cannot go on; else "continue"), a summary of what you did, the evidence that shows it, and, optionally, nextSteps for the next round and blockerText. At most ${cap} bytes of JSON in all. The next round is a fresh agent: this is all it will know of yours.`,
    parameters: Handoff.describe('The handoff to the next round'),
    readOnly: true,
    idempotent: true,
    present: (a) => `handoff ${a.status}: ${a.summary.length > 60 ? `${a.summary.slice(0, 59)}…` : a.summary}`,
    async execute(args) {
      const over = checkCap(args, cap);
      if (over) return { status: 'error', code: RalphCode.HANDOFF_TOO_LARGE, content: `Not recorded: ${over}.` };
      captured.value = args;
      return { status: 'ok', content: 'Handoff recorded. Your round is over: end your turn now with one short sentence.' };
    },
  };
}

export const Verdict = z.strictObject({
  verified: z.boolean().describe('Whether the workspace shows the objective met'),
  evidence: z.string().min(1).describe('What you observed that decides it'),
  citations: z.array(z.string().min(1)).min(1).describe('The workspace paths you read that show it (each must be one you read with your tools)'),
});
export type Verdict = z.infer<typeof Verdict>;

export function verdictTool(captured: Captured<Verdict>): ToolDefinition<Verdict> {
  return {
    name: 'verdict',
    description: 'Give your verdict on the claim: verified or not, the evidence you observed, and the workspace paths you read that show it. Call it once, after you have looked.',
    parameters: Verdict,
    readOnly: true,
    idempotent: true,
    present: (a) => `verdict ${a.verified ? 'verified' : 'rejected'} (${a.citations.length} citations)`,
    async execute(args) {
      captured.value = args;
      return { status: 'ok', content: 'Verdict recorded. End your turn now.' };
    },
  };
}
