/** The turn loop's and the context's settings, as the `turn` and `compaction` rows provide them. */
import type { BudgetConfig } from '../log/entries-budget.js';
import type { ModelErrorCode } from '../log/entry-values.js';

/** Which failed model requests are retried, after how long. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  retryable: readonly ModelErrorCode[];
}

export interface LoopSettings {
  /** The step budget of a turn. */
  readonly maxSteps: number;
  /** The session's spending cap for itself and its subagent tree (ADR 0047); absent: none. */
  readonly budget?: BudgetConfig;
}

export interface ContextSettings {
  /** The model's window in tokens, when set; else `windows[model]`, else the built-in table. */
  readonly window?: number;
  /** Windows per model id. */
  readonly windows: Readonly<Record<string, number>>;
  /** Compaction is due when the next request reaches this share of the window. */
  readonly threshold: number;
  readonly tailRatio?: number;
  readonly summaryMaxTokens?: number;
}

/** A turn's step budget when nothing sets one: the one place this default lives. */
export const DEFAULT_MAX_STEPS = 100;
