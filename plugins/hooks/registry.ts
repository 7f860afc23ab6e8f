/**
 * The `hooks` service: every hook of `ports/hooks.ts` on one dispatcher (one
 * registration primitive, each hook called by its declared mode), and the
 * guards, which see every validated call and can only deny (I6).
 */
import { HOOK_MODES, type Disposer, type Guard, type HookTable, type Hooks } from '../../ports/hooks.js';
import { Dispatcher } from '../dispatch.js';
import { placeByRank, unranked } from '../rank-order.js';

export class HookRegistry extends Dispatcher<{ [K in keyof HookTable]: HookTable[K] }> implements Hooks {
  private guards: { owner: string; guard: Guard; rank: number }[] = [];

  /** `rankOf`: as the dispatcher's (the host's mount order); guards only deny, but their reports read in row order. */
  constructor(rankOf: (owner: string) => number = unranked) {
    super(HOOK_MODES, rankOf);
  }

  /** Contract: the disposer is idempotent. */
  guard(owner: string, guard: Guard): Disposer {
    const entry = { owner, guard, rank: this.rankOf(owner) };
    this.guards = placeByRank(this.guards, entry);
    return () => {
      this.guards = this.guards.filter((g) => g !== entry);
    };
  }

  guardList(): readonly { owner: string; guard: Guard }[] {
    return this.guards;
  }
}
