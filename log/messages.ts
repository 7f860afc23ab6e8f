/**
 * The provider-neutral messages a model sees. Adapters translate these to
 * their wire format; nothing else reaches a model.
 */
import type { OpaqueReasoning } from './chunks.js';
import type { ToolSpec } from './entry-values.js';

/** A reasoning block that carries a provider's payload: `text` is its summary, `data` the item as received. */
export interface CarriedReasoning extends OpaqueReasoning {
  text: string;
}

export type ModelMessage =
  | { role: 'user'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      reasoning?: string;
      /**
       * The answer's reasoning blocks that carry a provider's payload, in order, whatever their provider:
       * each wire sends back its own and drops the others (ADR 0044).
       */
      carried?: CarriedReasoning[];
      toolCalls?: { id: string; name: string; arguments: string }[];
    }
  | { role: 'tool'; toolCallId: string; content: string };

export interface ModelRequest {
  model: string;
  system: string;
  tools: ToolSpec[];
  messages: readonly ModelMessage[];
  temperature?: number;
  maxTokens?: number;
  /** A key the provider's prompt cache may group requests by: the session's id, the same for all its requests. */
  cacheKey?: string;
}
