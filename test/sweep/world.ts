/**
 * A hostile world from one seed: approval policy and answerer, the inputs a
 * user sends (some while a turn runs, as followup, steer or inject), cancels
 * and manual compactions at random moments (when the log reaches a random
 * length, after a random number of microtasks), step and retry limits, and
 * sometimes a context window small enough that the pressure guard compacts,
 * and sometimes a store whose flushes fail (once, or from then on).
 */
import type { Answerer, ApprovalPolicy } from '../../ports/approval.js';
import type { RetryPolicy } from '../../ports/loop.js';
import type { InputMode } from '../../log/entries-inputs.js';
import type { ApprovalAnswer } from '../../ports/approval.js';
import { rngFor } from './prng.js';

export type Trigger =
  | { kind: 'input'; text: string; mode: InputMode; atEntry: number; hops: number }
  | { kind: 'cancel'; atEntry: number; hops: number }
  /** `session.compact()`: now if idle, else after the running turn. */
  | { kind: 'compact'; atEntry: number; hops: number };

export interface World {
  seed: number;
  policy: ApprovalPolicy;
  first: string;
  triggers: Trigger[];
  maxSteps: number;
  retry: RetryPolicy;
  /** A small window makes the pressure guard compact (proactive); unset, only a manual or an overflow does. */
  contextWindow?: number;
  /** The store's flush fails (EIO) from its `at`-th call: once, or for good (as a JSONL file whose sync failed). ADR 0017. */
  flushFault?: { at: number; sticky: boolean };
}

export const ANSWER_TIMEOUT_MS = 5;

/** Contract: pure in `seed`. */
export function makeWorld(seed: number): World {
  const r = rngFor(seed, 'world');
  const triggers: Trigger[] = [];
  for (let i = r.int(0, 3); i > 0; i--) {
    triggers.push({ kind: 'input', text: `more ${i}`, mode: r.pick(['followup', 'followup', 'steer', 'inject'] as const), atEntry: r.int(2, 40), hops: r.int(1, 4) });
  }
  for (let i = r.chance(0.55) ? r.int(1, 2) : 0; i > 0; i--) triggers.push({ kind: 'cancel', atEntry: r.int(2, 45), hops: r.int(1, 6) });
  if (r.chance(0.15)) triggers.push({ kind: 'compact', atEntry: r.int(2, 40), hops: r.int(1, 4) });
  const contextWindow = r.pick([undefined, undefined, undefined, 1500, 3000]);
  // A stream of its own (ADR 0003), so the worlds' other choices stay what they were.
  const s = rngFor(seed, 'store');
  const flushFault = s.chance(0.12) ? { at: s.int(1, 14), sticky: s.chance(0.5) } : undefined;
  return {
    seed,
    policy: r.pick(['auto', 'ask', 'ask', 'never'] as const),
    first: 'Do the thing.',
    triggers,
    maxSteps: r.int(2, 6),
    retry: { maxRetries: r.int(0, 2), baseDelayMs: 0, maxDelayMs: 1, retryable: ['RATE_LIMIT', 'SERVER', 'TRANSPORT'] },
    ...(contextWindow !== undefined ? { contextWindow } : {}),
    ...(flushFault ? { flushFault } : {}),
  };
}

/**
 * A person at the approval prompt, per call: allows (once, always, slowly),
 * rejects, throws, hangs past the answer timeout, answers nonsense, or tries
 * to widen an "always" to another tool. Pure in (seed, callId).
 */
export function sweepAnswerer(seed: number): Answerer {
  return async (req) => {
    const r = rngFor(seed, 'answer', req.callId);
    const x = r.float();
    if (x < 0.3) return { outcome: 'allowed-once', by: 'sweep' };
    if (x < 0.42) return { outcome: 'allowed-always', by: 'sweep' };
    if (x < 0.47) return { outcome: 'allowed-always', by: 'sweep', rule: { ...req.always, tool: 'peek' } } as ApprovalAnswer;
    if (x < 0.52) return new Promise((resolve) => setTimeout(() => resolve({ outcome: 'allowed-once', by: 'sweep, slowly' }), 1));
    if (x < 0.7) return { outcome: 'rejected', by: 'sweep' };
    if (x < 0.8) throw new Error('sweep: the answerer crashed');
    if (x < 0.9) return new Promise<ApprovalAnswer>(() => {});
    return { outcome: 'maybe', by: 'sweep' } as unknown as ApprovalAnswer;
  };
}
