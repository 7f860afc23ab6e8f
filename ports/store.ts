/** The store seam's port: the contract of `log/store.ts`, as the providers in `adapters/store/` implement it. */
export type { LogStore } from '../log/store.js';

import type { LogStore } from '../log/store.js';

/** The `store` service: where sessions' logs live. */
export interface SessionStore {
  /** The provider's name (`jsonl`, `memory`). */
  readonly id: string;
  /** Opens session `id`'s log for appending, creating it if new. */
  open(id: string): LogStore;
}
