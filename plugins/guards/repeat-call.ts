/**
 * The repeat-call guard: an agent that makes the same call again and again is
 * usually stuck. At 3, 5 and 8 consecutive identical calls (same tool, same
 * key-sorted arguments; denied calls count) it queues an advisory for the
 * model's next step. Advisory only: it never denies. Bookkeeping tools can be
 * excluded; they neither count nor break the chain.
 */
import { canonicalJson } from '../hooks/canonical.js';
import { z } from 'zod';
import { HOOKS, SESSION } from '../../ports/index.js';
import type { Plugin } from '../host.js';
import type { CallFacts } from '../../ports/hooks.js';

export interface RepeatCallOptions {
  thresholds?: readonly number[];
  /** Tool names that neither count nor reset the chain (e.g. a todo list). */
  exclude?: readonly string[];
}

export interface RepeatState {
  key?: string;
  count: number;
}

export const DEFAULT_THRESHOLDS = [3, 5, 8] as const;

/** Contract: pure. Returns the next state and, when the chain just reached a threshold, its length. */
export function trackRepeat(
  state: RepeatState,
  call: Pick<CallFacts, 'name' | 'args'>,
  o: RepeatCallOptions = {},
): { state: RepeatState; reached?: number } {
  if (o.exclude?.includes(call.name)) return { state };
  const key = `${call.name}\u0000${canonicalJson(call.args)}`;
  const count = key === state.key ? state.count + 1 : 1;
  const next = { key, count };
  return (o.thresholds ?? DEFAULT_THRESHOLDS).includes(count) ? { state: next, reached: count } : { state: next };
}

export function repeatAdvisory(count: number, call: Pick<CallFacts, 'name'>, last: boolean): string {
  const head = `[harness] You have made the same ${call.name} call ${count} times in a row, with identical arguments.`;
  return last
    ? `${head} Repeating it will not change its result. Stop repeating it: change your approach, or say what is blocking you and end the turn.`
    : `${head} Its result is unlikely to change; consider a different approach.`;
}

export const RepeatCallConfig = z.strictObject({
  thresholds: z.array(z.int().min(2)).min(1).default([...DEFAULT_THRESHOLDS]),
  exclude: z.array(z.string().min(1)).default([]),
});

/** The `guard:repeat-call` row. */
export const repeatCallPlugin: Plugin<z.infer<typeof RepeatCallConfig>> = {
  name: 'repeat-call',
  inject: [HOOKS, SESSION],
  config: RepeatCallConfig,
  apply(ctx, config) {
    const top = Math.max(...config.thresholds);
    let state: RepeatState = { count: 0 };
    ctx.hooks.guard((call) => {
      const r = trackRepeat(state, call, config);
      state = r.state;
      if (r.reached !== undefined) ctx.get(SESSION).inject(repeatAdvisory(r.reached, call, r.reached === top));
    });
  },
};
