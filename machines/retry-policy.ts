/**
 * The request-error policy: which failed model requests are retried, after
 * how long. Pure, so the step machine's guard and the tests agree.
 */
import type { Finish } from '../log/entries.js';
import type { RetryPolicy } from '../ports/loop.js';

export type { RetryPolicy } from '../ports/loop.js';


export const defaultRetryPolicy: RetryPolicy = {
  maxRetries: 3,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  retryable: ['RATE_LIMIT', 'SERVER', 'TRANSPORT'],
};

/**
 * Contract: pure. `attempt` counts the failed attempts so far (1 after the
 * first failure). Returns the delay before the next attempt, or undefined
 * when the failure is final. A server's Retry-After wins over the backoff,
 * capped at `maxDelayMs`.
 */
export function retryDelay(finish: Finish, attempt: number, policy: RetryPolicy): number | undefined {
  if (finish.kind !== 'error') return undefined;
  if (!policy.retryable.includes(finish.code)) return undefined;
  if (attempt > policy.maxRetries) return undefined;
  const backoff = policy.baseDelayMs * 2 ** (attempt - 1);
  const wanted = finish.retryAfterMs ?? backoff;
  return Math.min(wanted, policy.maxDelayMs);
}
