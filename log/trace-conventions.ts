/**
 * The OpenTelemetry GenAI conventions' vocabulary, as bridle's trace speaks it: the operation and span names,
 * the provider names, the finish reasons, the message shape of `gen_ai.*.messages`, the request attributes,
 * the events each entry kind that is no span of its own becomes, and the client metrics' names. `trace.ts`
 * places spans and events from the log; this file only says what they are called and carry. Pure tables and
 * functions of one entry: no ids, no times, no state.
 */
import type { Entry, EntryOf } from './entries.js';
import type { ModelMessage } from './messages.js';

export type TraceValue = string | number | boolean | string[];
export type TraceAttributes = Record<string, TraceValue>;

/** `gen_ai.operation.name`'s values, and the agent name the session span is invoked as. */
export const Operation = { INVOKE_AGENT: 'invoke_agent', CHAT: 'chat', EXECUTE_TOOL: 'execute_tool' } as const;
export const AGENT_NAME = 'bridle';

/** The span names: an operation and its subject, as the conventions name them; turns and compactions are bridle's own. */
export const SpanName = {
  session: `${Operation.INVOKE_AGENT} ${AGENT_NAME}`,
  chat: (model: string) => `${Operation.CHAT} ${model}`,
  tool: (name: string) => `${Operation.EXECUTE_TOOL} ${name}`,
  turn: (turn: string) => `turn ${turn}`,
  compaction: 'compaction',
} as const;

/** The client metrics' names (ADR 0058, 0079). */
export const OPERATION_DURATION = 'gen_ai.client.operation.duration';
export const TOKEN_USAGE = 'gen_ai.client.token.usage';
export const TIME_TO_FIRST_CHUNK = 'gen_ai.client.operation.time_to_first_chunk';
/** The attributes the conventions list for the client metrics, copied from the chat span where it has them. */
export const METRIC_KEYS = ['gen_ai.operation.name', 'gen_ai.provider.name', 'gen_ai.request.model', 'gen_ai.response.model'] as const;

/** The provider as the conventions name it: bridle's scripted model is no provider's. */
export const providerOf = (model: string) => (model.startsWith('scripted') ? 'bridle.scripted' : 'openai');

/** `gen_ai.response.finish_reasons`' values, by bridle's finish reason. */
export const FINISH: Record<string, string> = { stop: 'stop', 'tool-calls': 'tool_call', length: 'length', 'content-filter': 'content_filter', refusal: 'refusal' };

/** The conventions' message shape (`gen_ai.input.messages`): a role and its parts. */
export function conventionMessages(messages: readonly ModelMessage[]): unknown[] {
  return messages.map((m) => {
    if (m.role === 'user') return { role: 'user', parts: [{ type: 'text', content: m.content }] };
    if (m.role === 'tool') return { role: 'tool', parts: [{ type: 'tool_call_response', id: m.toolCallId, response: m.content }] };
    const parts: unknown[] = [];
    if (m.reasoning) parts.push({ type: 'reasoning', content: m.reasoning });
    if (m.content) parts.push({ type: 'text', content: m.content });
    for (const c of m.toolCalls ?? []) parts.push({ type: 'tool_call', id: c.id, name: c.name, arguments: c.arguments });
    return { role: 'assistant', parts };
  });
}

/** An answer in the same shape (`gen_ai.output.messages`), with its finish reason. */
export function outputMessage(e: EntryOf<'assistant/message'>): unknown {
  const parts: unknown[] = [];
  for (const b of e.blocks) {
    if (b.type === 'text') parts.push({ type: 'text', content: b.text });
    else if (b.type === 'reasoning') parts.push({ type: 'reasoning', content: b.text });
    else parts.push({ type: 'tool_call', id: b.id, name: b.name, arguments: b.arguments });
  }
  return { role: 'assistant', parts, finish_reason: e.finish.kind === 'ok' ? FINISH[e.finish.reason] : e.finish.kind === 'error' ? 'error' : 'aborted' };
}

/** The request attributes a `request/header` gives its chat span. */
export function requestAttributes(h: EntryOf<'request/header'>, model: string): TraceAttributes {
  return {
    'gen_ai.request.model': model,
    // The wire, where the header names it (a Responses or Anthropic session); else the model id tells.
    ...(h.params.reasoning ? { 'gen_ai.provider.name': h.params.reasoning === 'anthropic' ? 'anthropic' : 'openai' } : {}),
    ...(h.params.maxTokens !== undefined ? { 'gen_ai.request.max_tokens': h.params.maxTokens } : {}),
    ...(h.params.temperature !== undefined ? { 'gen_ai.request.temperature': h.params.temperature } : {}),
  };
}

/** The event every entry kind that is not a span of its own becomes: its name and attributes; undefined for the rest. */
export function eventNamed(e: Entry): { name: string; attributes: TraceAttributes } | undefined {
  const ev = (name: string, attributes: TraceAttributes = {}) => ({ name, attributes });
  switch (e.kind) {
    case 'approval/asked':
      return ev('bridle.approval.asked');
    case 'approval/decided':
      return ev('bridle.approval.decided', { 'bridle.approval.outcome': e.outcome, 'bridle.approval.by': e.by });
    case 'tool/dispatch':
      return ev('bridle.tool.dispatched', { 'bridle.tool.idempotent': e.idempotent });
    case 'model/retry':
      return ev('bridle.model.retry', { 'bridle.retry.attempt': e.attempt, 'error.type': e.code, 'bridle.retry.delay_ms': e.delayMs });
    case 'session/input':
      return ev('bridle.session.input', { 'bridle.input.mode': e.mode });
    case 'session/cancel':
      return ev('bridle.session.cancel');
    case 'session/compact':
      return ev('bridle.session.compact');
    case 'session/takeover':
      return ev('bridle.session.takeover');
    case 'session/policy':
      return ev('bridle.session.policy', { 'bridle.policy.by': e.by });
    case 'repair':
      return ev('bridle.repair', { 'bridle.repair.found': e.found });
    case 'log/not-durable':
      return ev('bridle.log.not_durable');
    case 'hook/report':
      return ev('bridle.hook.report', { 'bridle.hook.name': e.hook, 'bridle.hook.listener': e.listener });
    case 'subagent/start':
      return ev('bridle.subagent.start', { 'bridle.subagent.child': e.child, 'bridle.subagent.mode': e.mode });
    case 'subagent/end':
      return ev('bridle.subagent.end', { 'bridle.subagent.child': e.child, 'bridle.subagent.reason': e.reason, ...(e.code ? { 'error.type': e.code } : {}) });
    case 'mcp/server':
      return ev('bridle.mcp.server', { 'bridle.mcp.server': e.server, 'bridle.mcp.outcome': e.outcome });
    default:
      return undefined;
  }
}
