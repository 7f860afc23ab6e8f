/**
 * Provider-neutral requests → the OpenAI chat-completions wire. Pure.
 */
import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { ToolSpec } from '../../log/entry-values.js';
import type { ModelRequest } from '../../log/messages.js';

/**
 * The wire messages of `request`: the system prompt first (when non-empty),
 * then the conversation in order.
 * Contract: pure. Reasoning is not sent back: reasoning servers (DeepSeek)
 * reject `reasoning_content` in input messages, and OpenAI ignores it.
 */
export function toWireMessages(request: Pick<ModelRequest, 'system' | 'messages'>): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (request.system) out.push({ role: 'system', content: request.system });
  for (const m of request.messages) {
    switch (m.role) {
      case 'user':
        out.push({ role: 'user', content: m.content });
        break;
      case 'tool':
        out.push({ role: 'tool', tool_call_id: m.toolCallId, content: m.content });
        break;
      case 'assistant': {
        const calls = m.toolCalls ?? [];
        if (calls.length === 0) {
          out.push({ role: 'assistant', content: m.content ?? '' });
          break;
        }
        out.push({
          role: 'assistant',
          content: m.content,
          tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
        });
        break;
      }
    }
  }
  return out;
}

/**
 * Tools on the wire.
 * Contract (I7): only `name`, `description` and `parameters` reach the wire,
 * whatever else a spec object carries at run time.
 */
export function toWireTools(tools: readonly ToolSpec[]): ChatCompletionFunctionTool[] {
  return tools.map(({ name, description, parameters }) => ({
    type: 'function',
    function: { name, description, parameters },
  }));
}

/**
 * The whole streaming request body. `tools` is omitted when empty: some
 * OpenAI-compatible servers reject an empty array.
 * `maxTokens` goes out as `max_tokens`, the field every compatible server
 * (vLLM, llama.cpp, Ollama, DeepSeek) understands.
 */
export function toWireParams(request: ModelRequest, fallbackModel: string): ChatCompletionCreateParamsStreaming {
  const params: ChatCompletionCreateParamsStreaming = {
    model: request.model || fallbackModel,
    messages: toWireMessages(request),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) params.tools = toWireTools(request.tools);
  if (request.temperature !== undefined) params.temperature = request.temperature;
  if (request.maxTokens !== undefined) params.max_tokens = request.maxTokens;
  return params;
}
