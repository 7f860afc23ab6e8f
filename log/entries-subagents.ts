/**
 * A delegation's entries in the parent's log: the child started by a call,
 * and how it ended (with what its tree spent, ADR 0047). Part of the one
 * `Entry` union in `entries.ts`.
 */
import { z } from 'zod';
import { Spend } from './entries-budget.js';
import { CallId, envelope, TurnEndReason } from './entry-values.js';

export const SubagentStart = z.strictObject({
  ...envelope,
  kind: z.literal('subagent/start'),
  callId: CallId,
  child: z.string(),
  depth: z.int().positive(),
  /** The provider that runs the child: `spawn`, `fork`, `process`, `mock-remote`, or one a plugin registered. */
  mode: z.string().regex(/^[a-z][a-z0-9-]*$/),
  /** The model the child runs on, as its own `session/start` names it (ADR 0066); absent when the child's log did not say. */
  model: z.string().min(1).optional(),
});
export const SubagentEnd = z.strictObject({
  ...envelope,
  kind: z.literal('subagent/end'),
  callId: CallId,
  child: z.string(),
  reason: TurnEndReason,
  /** Why, when it did not complete: `SUBAGENT_CRASHED`, `TREE_BUDGET_EXHAUSTED`, the parent's cancel (`ABORTED`), … */
  code: z.string().min(1).optional(),
  /** What the child and its own tree spent, when its turn ended (ADR 0047): the parent's budget counts it. */
  usage: Spend.optional(),
});
