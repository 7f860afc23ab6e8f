/**
 * A compaction's bracket: `compaction/start`, the summary it wrote, and
 * `compaction/end` with what came of it (ADR 0005). Part of the one `Entry`
 * union in `entries.ts`.
 */
import { z } from 'zod';
import { envelope, TurnId } from './entry-values.js';

export const CompactionStart = z.strictObject({
  ...envelope,
  kind: z.literal('compaction/start'),
  turn: TurnId.optional(),
  trigger: z.enum(['proactive', 'reactive', 'manual']),
  estimatedTokens: z.int().nonnegative(),
  window: z.int().positive(),
});
export const CompactionSummary = z.strictObject({
  ...envelope,
  kind: z.literal('compaction/summary'),
  start: z.int().positive(),
  end: z.int().positive(),
  text: z.string(),
});
export const CompactionEnd = z.strictObject({
  ...envelope,
  kind: z.literal('compaction/end'),
  outcome: z.enum(['compacted', 'pruned', 'nothing-to-do', 'failed', 'interrupted']),
  tokensBefore: z.int().nonnegative(),
  tokensAfter: z.int().nonnegative(),
});
