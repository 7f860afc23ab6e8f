/**
 * The lease sweep (ADR 0034): every so often, the sessions of the store whose
 * owner's lease has expired while they had work left (a turn open, input
 * queued or forwarded and not taken) are asked of the hub exactly as an
 * attach would ask for them — taken over, repaired, resumed, their queued
 * input run — so a harness nobody watches goes on after a worker dies.
 * Which sessions those are is the store's to say (`candidates`); the lease
 * claim decides between workers sweeping at once, and the loser lets go.
 */
import type { SweepOutcome } from '../ports/relay.js';
import type { Hub } from './hub.js';

export interface SweepOptions {
  /** Every how long to look; the first look is one interval after the start. */
  everyMs: number;
  /** Most sessions asked for in one look. */
  perSweep: number;
  /** Up to `limit` ids of sessions of the store that need taking over now, oldest expiry first; `seen` says what became of each asked. */
  candidates(limit: number): Promise<string[]>;
  /** What the ask for one candidate came to (the store side remembers those it need not look at again). */
  seen?(id: string, outcome: SweepOutcome): void;
}

/** Contract: never rejects and never overlaps itself; a failed look is said to `onProblem` and the next one tries again. The result stops it. */
export function startSweep(hub: Hub, o: SweepOptions, onProblem: (m: string) => void): () => void {
  let stopped = false;
  let running = false;
  const look = async () => {
    if (running || stopped) return;
    running = true;
    try {
      const ids = await o.candidates(o.perSweep);
      for (const id of ids) {
        if (stopped) break;
        const outcome = await hub.sweep(id);
        o.seen?.(id, outcome);
        if (outcome === 'full') break;
      }
    } catch (err) {
      onProblem(`sweep: ${(err as Error)?.message ?? String(err)}`);
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void look(), o.everyMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
