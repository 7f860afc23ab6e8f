/**
 * The provider-neutral messages a model sees. Adapters translate these to
 * their wire format; nothing else reaches a model.
 */
import type { ToolSpec } from './entries.js';

export type ModelMessage =
  | { role: 'user'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      reasoning?: string;
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
}
