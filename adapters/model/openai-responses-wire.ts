/**
 * Provider-neutral requests → the OpenAI Responses wire. Pure.
 *
 * Nothing is kept server-side (`store: false`): every request carries the
 * whole conversation as input items, the model's own reasoning items among
 * them exactly as they were received (ADR 0044).
 */
import type { FunctionTool, ResponseCreateParamsStreaming, ResponseInputItem } from 'openai/resources/responses/responses';
import type { ToolSpec } from '../../log/entry-values.js';
import type { ModelRequest } from '../../log/messages.js';

/** The reasoning efforts the Responses API names; `none` turns reasoning off on models that allow it. */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

export interface ResponsesWireOptions {
  /** Used when a request names no model. */
  model: string;
  /** Used when a request sets no `maxTokens`. */
  maxOutputTokens?: number;
  /** Sent only when set: a model that does not reason rejects the `reasoning` parameter. */
  reasoningEffort?: ReasoningEffort;
}

/**
 * The input items of `request`'s messages, in order. An assistant message
 * becomes its reasoning items first (only those this wire produced: another
 * provider's are dropped, and the request header counts them), then its text,
 * then its function calls; each tool result a `function_call_output`.
 * Contract: pure; a reasoning item goes out as the very object the log holds.
 */
export function toResponsesInput(messages: ModelRequest['messages']): ResponseInputItem[] {
  const out: ResponseInputItem[] = [];
  for (const m of messages) {
    switch (m.role) {
      case 'user':
        out.push({ role: 'user', content: m.content });
        break;
      case 'tool':
        out.push({ type: 'function_call_output', call_id: m.toolCallId, output: m.content });
        break;
      case 'assistant':
        for (const r of m.carried ?? []) if (r.provider === 'openai-responses') out.push(r.data as ResponseInputItem);
        if (m.content) out.push({ role: 'assistant', content: m.content });
        for (const c of m.toolCalls ?? []) out.push({ type: 'function_call', call_id: c.id, name: c.name, arguments: c.arguments });
        break;
    }
  }
  return out;
}

/**
 * Tools as function tools.
 * Contract (I7): only `name`, `description` and `parameters` of a spec reach the wire. `strict: false`:
 * the Responses API would otherwise hold bridle's schemas to structured-output rules they were not written for.
 */
export function toResponsesTools(tools: readonly ToolSpec[]): FunctionTool[] {
  return tools.map(({ name, description, parameters }) => ({ type: 'function', name, description, parameters, strict: false }));
}

/**
 * The whole streaming request body. `prompt_cache_key` is the session id, so a
 * session's requests land on one cache; `tools` is omitted when empty.
 */
export function toResponsesParams(request: ModelRequest, o: ResponsesWireOptions): ResponseCreateParamsStreaming {
  const params: ResponseCreateParamsStreaming = {
    model: request.model || o.model,
    input: toResponsesInput(request.messages),
    stream: true,
    store: false,
    include: ['reasoning.encrypted_content'],
  };
  if (request.system) params.instructions = request.system;
  if (request.tools.length > 0) params.tools = toResponsesTools(request.tools);
  if (request.cacheKey) params.prompt_cache_key = request.cacheKey;
  if (o.reasoningEffort !== undefined) params.reasoning = { effort: o.reasoningEffort, summary: 'auto' };
  const max = request.maxTokens ?? o.maxOutputTokens;
  if (max !== undefined) params.max_output_tokens = max;
  if (request.temperature !== undefined) params.temperature = request.temperature;
  return params;
}
