/**
 * `update_plan` (ADR 0076): the model's plan for the task, as a list of steps it replaces whole with each call.
 * It changes nothing outside the session: the plan is the call's arguments, in the log like any call, so a replay
 * shows it; each surface draws its `plan` intent (the CLI a checklist, ACP a `plan` update). Not in `base`: a row
 * (`{ id: 'tool:update_plan', use: 'update_plan' }`) offers it.
 */
import { z } from 'zod';
import type { IntentBody, PlanStep } from '../ports/present.js';
import type { ZodToolDefinition } from '../ports/tools.js';
import { ok } from './output.js';

export const PLAN_MAX_ENTRIES = 50;
export const PLAN_ENTRY_CHARS = 500;

export const PlanStepSchema = z.strictObject({
  content: z.string().min(1).max(PLAN_ENTRY_CHARS).describe('What this step does, in a short sentence.'),
  status: z.enum(['pending', 'in_progress', 'completed']).describe('Where the step is: pending, in_progress (the one being worked on) or completed.'),
  priority: z.enum(['high', 'medium', 'low']).optional().describe('How much it matters. Default: medium.'),
});

const parameters = z.strictObject({
  entries: z.array(PlanStepSchema).max(PLAN_MAX_ENTRIES).describe('The whole plan, every step in order with its status now: it replaces the plan before. Empty: no plan.'),
});
export type UpdatePlanArgs = z.infer<typeof parameters>;

/** Contract: pure. How far a plan is, in a few words (`2 of 5 completed`). */
export function planProgress(entries: readonly PlanStep[]): string {
  const done = entries.filter((e) => e.status === 'completed').length;
  return entries.length === 0 ? 'no steps' : `${done} of ${entries.length} completed`;
}

export const updatePlanTool: ZodToolDefinition<UpdatePlanArgs> = {
  name: 'update_plan',
  description:
    'Keep a plan for a task of several steps: send every step with its status (pending, in_progress, completed), and send it again, whole, as steps start and finish. Shown to the user; changes no file.',
  parameters,
  readOnly: true,
  idempotent: true,
  present: (args) => `update_plan (${planProgress(args.entries)})`,
  execute: async (args) => ok(`Plan updated: ${planProgress(args.entries)}.`),
  presentResult: (args, result): IntentBody | undefined => (result.status === 'ok' ? { kind: 'plan', entries: args.entries.map((e) => ({ ...e })) } : undefined),
};
