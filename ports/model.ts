/**
 * The ports of bridle's seams. Providers live in `adapters/<seam>/<provider>.ts`
 * and export these shapes; actors call them.
 */
import type { Chunk } from '../log/chunks.js';
import type { Entry } from '../log/entries.js';
import type { ModelRequest } from '../log/messages.js';

/**
 * The model seam.
 * Contract: `stream` never throws and never rejects: every failure is encoded
 * in the stream, which ends in exactly one `finish` chunk (I8). An aborted
 * signal ends it with `finish { kind: 'aborted' }`.
 */
export interface ModelProvider {
  readonly id: string;
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<Chunk>;
}

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

/** An injected clock: milliseconds since the epoch. */
export type Clock = () => number;
