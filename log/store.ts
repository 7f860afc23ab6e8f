/**
 * The store contract the recorder writes through. The store seam's port
 * (`ports/store.ts`) builds on it; importers take `LogStore` from here;
 * providers live in `adapters/store/`.
 */
import type { Entry } from './entries.js';

/**
 * The store seam: where validated, stamped entries go.
 * Contract: `append` is synchronous and ordered; `flush` resolves once every
 * entry appended before the call is durable. A store that is durable on
 * append (memory) uses `nothingToFlush` from `log/recorder.ts` as its `flush`:
 * the runtime then skips the flush actors, recognizing it by identity.
 */
export interface LogStore {
  readonly location: string;
  append(entry: Entry, line: string): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}
