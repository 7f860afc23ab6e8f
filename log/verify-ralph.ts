/**
 * The Ralph part of verifying a log: a run's rounds and checks open and
 * close in order, one at a time (ADR 0024). `verifyLog` calls it for each
 * Ralph entry and flags what it returns as a forged entry.
 */
import type { EntryOf } from './entries.js';

export interface RalphState {
  started: boolean;
  ended: boolean;
  /** The round whose child runs (no `ralph/handoff` yet). */
  round?: EntryOf<'ralph/round'>;
  /** The check that runs (no `ralph/verdict` yet). */
  verify?: EntryOf<'ralph/verify'>;
}

/** Contract: pure. One Ralph entry against the run so far; returns what is wrong with it, if anything. */
export function ralphStep(s: RalphState, e: EntryOf<'ralph/round' | 'ralph/handoff' | 'ralph/verify' | 'ralph/verdict' | 'ralph/end'>): string | undefined {
  switch (e.kind) {
    case 'ralph/round':
      if (s.round || s.verify) return `round ${e.round} begins while ${s.round ? `round ${s.round.round}` : `the check of round ${s.verify!.round}`} is open`;
      s.round = e;
      return undefined;
    case 'ralph/handoff':
      if (!s.round || s.round.round !== e.round || s.round.child !== e.child) return `a handoff of round ${e.round} (${e.child}), which is not the open round`;
      s.round = undefined;
      return undefined;
    case 'ralph/verify':
      if (s.round || s.verify) return `a check of round ${e.round} while ${s.round ? 'a round' : 'another check'} is open`;
      s.verify = e;
      return undefined;
    case 'ralph/verdict':
      if (!s.verify || s.verify.round !== e.round || s.verify.by !== e.by) return `a verdict on round ${e.round} (${e.by}) with no such check open`;
      s.verify = undefined;
      return undefined;
    case 'ralph/end':
      if (s.round || s.verify) return 'ralph/end while a round or a check is open';
      // A cancelled run may be resumed: more rounds may follow it.
      s.ended = e.outcome !== 'cancelled';
      return undefined;
  }
}
