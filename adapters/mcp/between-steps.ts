/**
 * When a changed tool list may take effect: between steps, never in one. A
 * step's request offered the model some tools and its calls are checked
 * and classed against them; swapping the registry under it would have the
 * model's calls judged by a list it never saw. So a change that arrives
 * while a step runs waits for that step's `step/end` (or its turn's
 * `turn/end`, for a step cut short); one that arrives between steps, or
 * between turns, applies at once. Only the latest list matters: two
 * changes during one step apply once.
 */
import type { Entry } from '../../log/entries.js';

export interface BetweenSteps {
  /** Every entry the session appends, in order. */
  entry(e: Entry): void;
  /** A change arrived: applied now, or at the running step's end. */
  changed(): void;
}

/** Contract: calls `apply` synchronously, only outside a step, at most once per batch of changes. */
export function betweenSteps(apply: () => void): BetweenSteps {
  let inStep = false;
  let pending = false;
  const flush = () => {
    if (!pending) return;
    pending = false;
    apply();
  };
  return {
    entry(e) {
      if (e.kind === 'step/start') inStep = true;
      else if (e.kind === 'step/end' || e.kind === 'turn/end') {
        inStep = false;
        flush();
      }
    },
    changed() {
      pending = true;
      if (!inStep) flush();
    },
  };
}
