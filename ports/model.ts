/** The model seam's port. Providers: `adapters/model/` (openai, scripted). */
import type { Chunk } from '../log/chunks.js';
import type { ReasoningProvider } from '../log/entry-values.js';
import type { ModelRequest } from '../log/messages.js';

/**
 * The model seam.
 * Contract: `stream` never throws and never rejects: every failure is encoded
 * in the stream, which ends in exactly one `finish` chunk (I8). An aborted
 * signal ends it with `finish { kind: 'aborted' }`. A provider that streams
 * yields a bare `first-chunk` first, at its response's first event, so the
 * step can time it (ADR 0079); one that does not is simply not timed.
 */
export interface ModelProvider {
  readonly id: string;
  /** The model's name as the log records it (`session/start`, request headers); default `id`. */
  readonly name?: string;
  /** Set for a scripted model: shown wherever its output appears, so it is never taken for a real model's. */
  readonly label?: string;
  /**
   * The provider whose opaque reasoning blocks this wire sends back (`openai-responses`, `anthropic`); the
   * others' are dropped from its requests, and the request header says how many (ADR 0044).
   */
  readonly reasoning?: ReasoningProvider;
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<Chunk>;
}
