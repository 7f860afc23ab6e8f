/**
 * The `hooks` service: every hook of `ports/hooks.ts` on one dispatcher (one
 * registration primitive, each hook called by its declared mode), and the
 * guards, which see every validated call and can only deny (I6).
 */
import { HOOK_MODES, type Disposer, type Guard, type HookTable, type Hooks } from '../../ports/hooks.js';
import { Dispatcher } from '../dispatch.js';

export class HookRegistry extends Dispatcher<{ [K in keyof HookTable]: HookTable[K] }> implements Hooks {
  private guards: { owner: string; guard: Guard }[] = [];

  constructor() {
    super(HOOK_MODES);
  }

  /** Contract: the disposer is idempotent. */
  guard(owner: string, guard: Guard): Disposer {
    const entry = { owner, guard };
    this.guards = [...this.guards, entry];
    return () => {
      this.guards = this.guards.filter((g) => g !== entry);
    };
  }

  guardList(): readonly { owner: string; guard: Guard }[] {
    return this.guards;
  }
}
