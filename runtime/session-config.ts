/**
 * The settings `session/start` records (`config`), so the log alone says how
 * the machines were configured: replay reads them back (I12). Only what was
 * set is written, so a session created with defaults logs no `config`.
 */
import type { BudgetConfig } from '../log/entries-budget.js';
import type { SessionConfig } from '../log/entries-session.js';
import type { RetryPolicy } from '../ports/loop.js';

/** What a session was configured with, in the shape its options take it. */
export interface Configured {
  maxSteps?: number;
  retry?: RetryPolicy;
  contextWindow?: number;
  compactThreshold?: number;
  compaction?: { tailRatio?: number; summaryMaxTokens?: number };
  budget?: BudgetConfig;
}

/** Contract: pure; `{}` when nothing is set, else `{ config }` with the set values only, copied. */
export function sessionConfig(o: Configured): { config?: SessionConfig } {
  const config: SessionConfig = {};
  if (o.maxSteps !== undefined) config.maxSteps = o.maxSteps;
  if (o.retry !== undefined) config.retry = { maxRetries: o.retry.maxRetries, baseDelayMs: o.retry.baseDelayMs, maxDelayMs: o.retry.maxDelayMs, retryable: [...o.retry.retryable] };
  if (o.contextWindow !== undefined) config.contextWindow = o.contextWindow;
  if (o.compactThreshold !== undefined) config.compactThreshold = o.compactThreshold;
  if (o.compaction !== undefined) {
    const c: NonNullable<SessionConfig['compaction']> = {};
    if (o.compaction.tailRatio !== undefined) c.tailRatio = o.compaction.tailRatio;
    if (o.compaction.summaryMaxTokens !== undefined) c.summaryMaxTokens = o.compaction.summaryMaxTokens;
    config.compaction = c;
  }
  if (o.budget !== undefined) config.budget = structuredClone(o.budget);
  return Object.keys(config).length > 0 ? { config } : {};
}
