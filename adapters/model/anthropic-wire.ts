/**
 * bridle's request → Anthropic Messages API parameters. Pure, so what
 * reaches the wire is decided here and tested without a server.
 *
 * - Only a tool's `name`, `description` and `parameters` go out (I7).
 * - An assistant turn goes back with its own thinking blocks first, exactly
 *   as they were received (a `thinking` block with its `signature`, or a
 *   `redacted_thinking` block), then its text, then its tool calls: the API
 *   requires the thinking of the turn that precedes tool results, unmodified.
 *   Another wire's reasoning is dropped (the request header counts it).
 * - Tool results are `tool_result` blocks of one user message, consecutive
 *   results merged, as the API wants them.
 * - Prompt caching: `cache_control` breakpoints on the last tool, the system
 *   prompt, the last block of the newest message (where this request writes
 *   the cache) and the last block of the message before the newest assistant
 *   turn — the API's four. That fourth is where the request before wrote its
 *   cache (it ended there; an assistant turn after a message freezes it), so
 *   each request reads that cache at a mark of its own: the API finds a
 *   cache only about 20 blocks back from a mark, and one step of parallel
 *   tool calls and their results can add more than that (ADR 0049).
 *   Requests are append-only between compactions, so the marked prefixes
 *   are the ones the cache holds.
 */
import type { ModelMessage, ModelRequest } from '../../log/messages.js';

export type AnthropicBlock = Record<string, unknown> & { type: string };
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicBlock[];
}
export interface AnthropicParams {
  model: string;
  max_tokens: number;
  system?: AnthropicBlock[];
  messages: AnthropicMessage[];
  tools?: Record<string, unknown>[];
  thinking?: { type: 'enabled'; budget_tokens: number };
  temperature?: number;
  stream: true;
}

export interface AnthropicWireOptions {
  model: string;
  /** `max_tokens` when the request sets none (the API requires one). */
  maxOutputTokens: number;
  /** Extended thinking's budget; unset: no thinking asked for. */
  thinkingBudget?: number;
}

/** The API's limit on `cache_control` breakpoints in one request. */
export const MAX_BREAKPOINTS = 4;
const EPHEMERAL = { type: 'ephemeral' } as const;

/** A call's arguments as the object the API wants; text that is not an object is passed as what it was. */
function inputOf(args: string): Record<string, unknown> {
  try {
    const v = JSON.parse(args) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // the call was rejected for it (I4); its result says so
  }
  return { _unparsed: args };
}

function assistantBlocks(m: Extract<ModelMessage, { role: 'assistant' }>): AnthropicBlock[] {
  const out: AnthropicBlock[] = [];
  for (const r of m.carried ?? []) if (r.provider === 'anthropic' && r.data && typeof r.data === 'object') out.push(r.data as AnthropicBlock);
  if (m.content) out.push({ type: 'text', text: m.content });
  for (const c of m.toolCalls ?? []) out.push({ type: 'tool_use', id: c.id, name: c.name, input: inputOf(c.arguments) });
  return out;
}

/** bridle's messages as Anthropic's: alternating roles, tool results folded into user turns. */
export function toAnthropicMessages(messages: readonly ModelMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  const push = (role: AnthropicMessage['role'], blocks: AnthropicBlock[]) => {
    if (blocks.length === 0) return;
    const last = out.at(-1);
    // Two user turns in a row (a result then a steer, two steers) are one user message of several blocks.
    if (last && last.role === role && role === 'user') last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    if (m.role === 'user') push('user', [{ type: 'text', text: m.content }]);
    else if (m.role === 'tool') push('user', [{ type: 'tool_result', tool_use_id: m.toolCallId, content: m.content }]);
    else push('assistant', assistantBlocks(m));
  }
  return out;
}

/** Contract: pure; at most `MAX_BREAKPOINTS` `cache_control` marks; the request's own blocks are never changed (copies are marked). */
export function toAnthropicParams(request: ModelRequest, o: AnthropicWireOptions): AnthropicParams {
  const tools = request.tools.map((t, i, all) => ({
    name: t.name,
    description: t.description,
    input_schema: t.parameters,
    ...(i === all.length - 1 ? { cache_control: EPHEMERAL } : {}),
  }));
  const messages = toAnthropicMessages(request.messages);
  const mark = (i: number) => {
    const m = messages[i];
    if (!m || m.content.length === 0) return;
    const blocks = m.content.slice();
    const end = blocks.length - 1;
    // Thinking blocks cannot carry a breakpoint; a message ends in text, a tool call or a result.
    if (blocks[end]!.type === 'thinking' || blocks[end]!.type === 'redacted_thinking') return;
    blocks[end] = { ...blocks[end]!, cache_control: EPHEMERAL };
    messages[i] = { role: m.role, content: blocks };
  };
  // Where the request before ended (the message its answer followed), then where this one ends.
  const answered = messages.findLastIndex((m) => m.role === 'assistant');
  if (answered > 0) mark(answered - 1);
  mark(messages.length - 1);
  const maxTokens = request.maxTokens ?? o.maxOutputTokens;
  const thinking = o.thinkingBudget !== undefined ? { type: 'enabled' as const, budget_tokens: Math.min(o.thinkingBudget, Math.max(1024, maxTokens - 1)) } : undefined;
  return {
    model: request.model || o.model,
    max_tokens: maxTokens,
    ...(request.system ? { system: [{ type: 'text', text: request.system, cache_control: EPHEMERAL }] } : {}),
    messages,
    ...(tools.length > 0 ? { tools } : {}),
    ...(thinking ? { thinking } : {}),
    // The API refuses a temperature with thinking on.
    ...(request.temperature !== undefined && !thinking ? { temperature: request.temperature } : {}),
    stream: true,
  };
}

/** How many `cache_control` marks a request carries (the tests hold it to `MAX_BREAKPOINTS`). */
export function breakpointsOf(p: AnthropicParams): number {
  let n = 0;
  const count = (b: Record<string, unknown>) => (b.cache_control ? n++ : 0);
  p.system?.forEach(count);
  p.tools?.forEach(count);
  for (const m of p.messages) m.content.forEach(count);
  return n;
}
