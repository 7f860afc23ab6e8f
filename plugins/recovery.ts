/**
 * The built-in `request-error` listeners, each a row of the base bundle:
 * `recovery:retry` (a retryable code is tried again after a backoff or the
 * server's Retry-After, up to a number of retries) and `recovery:overflow`
 * (an overflowed request has the turn compact the context and try once more).
 * What no listener answers is given up: the failure stands and the turn ends
 * `error`. A plugin adds its own, ahead of these (`insert … before:
 * recovery:retry`): give up at once on AUTH, trim and retry on an overflow.
 */
import { z } from 'zod';
import type { Finish } from '../log/entry-values.js';
import { ModelErrorCode } from '../log/entry-values.js';
import { HOOKS } from '../ports/index.js';
import type { RetryPolicy } from '../ports/loop.js';
import type { Plugin } from './host.js';
import { ModelCode } from '../log/entry-values.js';


export const defaultRetryPolicy: RetryPolicy = {
  maxRetries: 3,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  retryable: [ModelCode.RATE_LIMIT, ModelCode.SERVER, ModelCode.TRANSPORT],
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

export const RetryConfig = z.strictObject({
  maxRetries: z.int().nonnegative().default(defaultRetryPolicy.maxRetries),
  baseDelayMs: z.number().nonnegative().default(defaultRetryPolicy.baseDelayMs),
  maxDelayMs: z.number().nonnegative().default(defaultRetryPolicy.maxDelayMs),
  retryable: z.array(ModelErrorCode).default([...defaultRetryPolicy.retryable]),
});

/** The `recovery:retry` row: backoff (or Retry-After) for the retryable codes. */
export const retryPlugin: Plugin<RetryPolicy> = {
  name: 'retry',
  inject: [HOOKS],
  config: RetryConfig,
  apply(ctx, policy) {
    ctx.hooks.on('request-error', async (p, next) => {
      const delayMs = retryDelay(p.finish, p.failures, policy);
      return delayMs === undefined ? next() : { kind: 'retry', delayMs };
    });
  },
};

/** The `recovery:overflow` row: an overflowed request compacts the context and is tried again, once per turn. */
export const overflowPlugin: Plugin = {
  name: 'overflow',
  inject: [HOOKS],
  config: z.strictObject({}),
  apply(ctx) {
    ctx.hooks.on('request-error', async (p, next) => (p.code === ModelCode.CONTEXT_WINDOW_EXCEEDED && !p.overflowRetried ? { kind: 'compact' } : next()));
  },
};
