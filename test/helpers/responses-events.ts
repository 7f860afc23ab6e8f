/**
 * Responses API streams for the local SSE server (`openai-sse-server.ts`
 * serves any path, `/v1/responses` included): events built the way the API
 * sends them (`event: <type>` and `data: <json>`, a `sequence_number` on
 * each, no `[DONE]`), for adapter tests and CLI e2e.
 *
 *   srv.enqueue(responsesReply([...reasoningEvents(0, item), ...textEvents(1, 'hi'), completed()]));
 */
import { raw, type Reply, type StreamItem } from './openai-sse-server.js';

export type ResponsesEvent = Record<string, unknown> & { type: string };

/** A reasoning item as the API returns it with `include: ["reasoning.encrypted_content"]`. */
export const reasoningItem = (id: string, summary: string[], encrypted: string) => ({
  id,
  type: 'reasoning',
  summary: summary.map((text) => ({ type: 'summary_text', text })),
  encrypted_content: encrypted,
});

/** A reasoning item at `at`: added without its summary, the summary streamed part by part, then done whole. */
export function reasoningEvents(at: number, item: ReturnType<typeof reasoningItem>): ResponsesEvent[] {
  const out: ResponsesEvent[] = [{ type: 'response.output_item.added', output_index: at, item: { ...item, summary: [] } }];
  item.summary.forEach((part, i) => {
    out.push({ type: 'response.reasoning_summary_part.added', item_id: item.id, output_index: at, summary_index: i, part: { type: 'summary_text', text: '' } });
    for (const piece of split(part.text)) out.push({ type: 'response.reasoning_summary_text.delta', item_id: item.id, output_index: at, summary_index: i, delta: piece });
    out.push({ type: 'response.reasoning_summary_text.done', item_id: item.id, output_index: at, summary_index: i, text: part.text });
  });
  out.push({ type: 'response.output_item.done', output_index: at, item });
  return out;
}

/** An assistant message at `at` whose text streams in pieces. */
export function textEvents(at: number, text: string, id = `msg_${at}`): ResponsesEvent[] {
  const item = { id, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], text }] };
  return [
    { type: 'response.output_item.added', output_index: at, item: { ...item, status: 'in_progress', content: [] } },
    { type: 'response.content_part.added', item_id: id, output_index: at, content_index: 0, part: { type: 'output_text', annotations: [], text: '' } },
    ...split(text).map((delta) => ({ type: 'response.output_text.delta', item_id: id, output_index: at, content_index: 0, delta })),
    { type: 'response.output_text.done', item_id: id, output_index: at, content_index: 0, text },
    { type: 'response.content_part.done', item_id: id, output_index: at, content_index: 0, part: item.content[0] },
    { type: 'response.output_item.done', output_index: at, item },
  ];
}

/** A refusal message at `at`. */
export function refusalEvents(at: number, refusal: string, id = `msg_${at}`): ResponsesEvent[] {
  const item = { id, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal }] };
  return [
    { type: 'response.output_item.added', output_index: at, item: { ...item, status: 'in_progress', content: [] } },
    { type: 'response.content_part.added', item_id: id, output_index: at, content_index: 0, part: { type: 'refusal', refusal: '' } },
    ...split(refusal).map((delta) => ({ type: 'response.refusal.delta', item_id: id, output_index: at, content_index: 0, delta })),
    { type: 'response.refusal.done', item_id: id, output_index: at, content_index: 0, refusal },
    { type: 'response.content_part.done', item_id: id, output_index: at, content_index: 0, part: item.content[0] },
    { type: 'response.output_item.done', output_index: at, item },
  ];
}

export interface Call {
  call_id: string;
  name: string;
  arguments: string;
}

/** Function calls from `at` on, each added, its arguments in pieces, then done; `interleave` sends their deltas alternately (parallel calls). */
export function callEvents(at: number, calls: Call[], interleave = false): ResponsesEvent[] {
  const items = calls.map((c, i) => ({ id: `fc_${at + i}`, type: 'function_call', status: 'completed', arguments: c.arguments, call_id: c.call_id, name: c.name }));
  const deltas = items.map((item, i) => split(item.arguments).map((delta) => ({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index: at + i, delta })));
  const added = items.map((item, i) => ({ type: 'response.output_item.added', output_index: at + i, item: { ...item, status: 'in_progress', arguments: '' } }));
  const done = items.map((item, i) => [
    { type: 'response.function_call_arguments.done', item_id: item.id, output_index: at + i, arguments: item.arguments },
    { type: 'response.output_item.done', output_index: at + i, item },
  ]);
  if (!interleave) return items.flatMap((_, i) => [added[i]!, ...deltas[i]!, ...done[i]!]);
  const out: ResponsesEvent[] = [...added];
  for (let k = 0; k < Math.max(...deltas.map((d) => d.length)); k++) for (const d of deltas) if (d[k]) out.push(d[k]!);
  return [...out, ...done.flat()];
}

export interface WireUsage {
  input_tokens: number;
  output_tokens: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
}

const usageOf = (u: WireUsage) => ({
  input_tokens: u.input_tokens,
  input_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
  output_tokens: u.output_tokens,
  output_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
  total_tokens: u.input_tokens + u.output_tokens,
});

const response = (status: string, extra: Record<string, unknown> = {}) => ({ id: 'resp_1', object: 'response', created_at: 1_780_000_000, status, model: 'm', output: [], ...extra });

export const created = (): ResponsesEvent => ({ type: 'response.created', response: response('in_progress') });
export const completed = (u: WireUsage = { input_tokens: 10, output_tokens: 5 }): ResponsesEvent => ({ type: 'response.completed', response: response('completed', { usage: usageOf(u) }) });
export const incomplete = (reason: string, u: WireUsage = { input_tokens: 10, output_tokens: 5 }): ResponsesEvent => ({
  type: 'response.incomplete',
  response: response('incomplete', { incomplete_details: { reason }, usage: usageOf(u) }),
});
export const failed = (code: string, message: string): ResponsesEvent => ({ type: 'response.failed', response: response('failed', { error: { code, message } }) });
export const errorEvent = (code: string, message: string): ResponsesEvent => ({ type: 'error', code, message, param: null });

/** Frames events as the API does, numbering them in order. */
export function frames(events: readonly ResponsesEvent[]): StreamItem[] {
  return events.map((e, i) => raw(`event: ${e.type}\ndata: ${JSON.stringify({ ...e, sequence_number: i })}\n\n`));
}

/** A whole Responses stream: `response.created`, the events, as SSE; no `[DONE]` (the API sends none). */
export const responsesReply = (events: readonly ResponsesEvent[]): Reply => ({ type: 'stream', chunks: frames([created(), ...events]), done: false });
/** The stream's frames, then the socket cut: a stream that ends before its terminal event. */
export const responsesDrop = (events: readonly ResponsesEvent[]): Reply => ({ type: 'drop', chunks: frames([created(), ...events]) });

function split(s: string, parts = 3): string[] {
  const cps = [...s];
  if (cps.length <= 1) return cps.length ? [s] : [];
  const size = Math.ceil(cps.length / parts);
  const out: string[] = [];
  for (let i = 0; i < cps.length; i += size) out.push(cps.slice(i, i + size).join(''));
  return out;
}
