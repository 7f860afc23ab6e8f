/**
 * A trace is a projection of the log (docs/design.md §12), as the model's
 * messages are: `traceOf(entries)` maps a session's entries — and, through
 * `children`, its subagents' — to spans named and attributed after the
 * OpenTelemetry GenAI conventions: `invoke_agent bridle` for the session,
 * `turn tN` for each turn, `chat {model}` for each step's model request,
 * `execute_tool {name}` for each call, `compaction` for each compaction;
 * approvals, dispatches, retries, cancels, inputs and repairs are events.
 *
 * Times come from the entries' `at`, and trace and span ids are hashed from
 * the root session's id and the seq of the entry that opened the span, so
 * the same log always gives the same trace, byte for byte once encoded.
 * Message content (`gen_ai.input.messages`, tool arguments and results) is
 * there only when `content` is asked for.
 */
import type { Entry, EntryOf } from './entries.js';
import { Projection } from './derive-messages.js';
import type { ModelMessage } from './messages.js';
import { ModelCode } from './entry-values.js';

export type TraceValue = string | number | boolean | string[];
export type TraceAttributes = Record<string, TraceValue>;
export interface TraceEvent {
  name: string;
  timeUnixNano: string;
  attributes: TraceAttributes;
}
export interface TraceSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** `client` for a request to a model; `internal` for the rest (the agent, turns and tools run in-process). */
  kind: 'internal' | 'client';
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: TraceAttributes;
  events: TraceEvent[];
  status: { code: 'unset' | 'ok' | 'error'; message?: string };
  links: { traceId: string; spanId: string; attributes: TraceAttributes }[];
}

export interface TraceOptions {
  /** Record message content (the conventions' opt-in); off by default. */
  content?: boolean;
  /** A subagent's entries by its session id (`subagent/start`'s `child`), when the caller can read them. */
  children?: (child: string) => readonly Entry[] | undefined;
  /** Set for a subagent's own spans: the tree's trace and the span they hang under. */
  traceId?: string;
  parentSpanId?: string;
}

/** FNV-1a, 64 bits: a pure, stable hash (the ids only need to be stable and well spread, not secret). */
function fnv64(text: string): bigint {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) {
    h ^= BigInt(text.charCodeAt(i));
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h === 0n ? 1n : h;
}
const hex64 = (text: string) => fnv64(text).toString(16).padStart(16, '0');
export const traceIdOf = (sessionId: string) => hex64(`trace:${sessionId}`) + hex64(`trace/2:${sessionId}`);
const spanIdOf = (sessionId: string, seq: number, role: string) => hex64(`${sessionId}#${seq}#${role}`);

/** A W3C trace context header, version 00 (https://www.w3.org/TR/trace-context/#traceparent-header). */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
export interface SpanContext {
  traceId: string;
  spanId: string;
}
/** Contract: the ids of a well-formed `traceparent`, else undefined (all-zero ids are invalid, as the spec says). */
export function parseTraceparent(header: string): SpanContext | undefined {
  const m = TRACEPARENT.exec(header.trim());
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined;
  return { traceId: m[1]!, spanId: m[2]! };
}
export const traceparentOf = (c: SpanContext) => `00-${c.traceId}-${c.spanId}-01`;

/**
 * The trace a session's spans are in, and the span its `invoke_agent` hangs under: what its `session/start`
 * logged (a `traceparent` given from outside, or by the parent that started it), else what the caller's
 * projection says (an older child log), else a trace of its own, hashed from its id.
 */
function contextOf(start: EntryOf<'session/start'>, options: TraceOptions): { traceId: string; parentSpanId?: string } {
  const logged = start.traceparent ? parseTraceparent(start.traceparent) : undefined;
  if (logged) return { traceId: logged.traceId, parentSpanId: logged.spanId };
  return { traceId: options.traceId ?? traceIdOf(start.id), parentSpanId: options.parentSpanId };
}

/**
 * The `traceparent` a child started by call `callId` is given: this session's trace, and the span the child's
 * `subagent/start` is an event of (the call's, else the turn's, else the session's) — the span `traceOf` hangs the
 * child under, so a child that logs it is placed the same live and after the fact.
 * Contract: pure; the entries are this session's log so far, from its `session/start`.
 */
export function childTraceparent(entries: readonly Entry[], callId: string): string | undefined {
  const start = entries[0];
  if (!start || start.kind !== 'session/start') return undefined;
  const { traceId } = contextOf(start, {});
  let turn: Entry | undefined;
  for (const e of entries) {
    if (e.kind === 'tool/call' && e.callId === callId) return traceparentOf({ traceId, spanId: spanIdOf(start.id, e.seq, 'tool') });
    if (e.kind === 'turn/start') turn = e;
    else if (e.kind === 'turn/end') turn = undefined;
  }
  return traceparentOf({ traceId, spanId: turn ? spanIdOf(start.id, turn.seq, 'turn') : spanIdOf(start.id, start.seq, 'session') });
}

const nanosOf = (at: string) => `${BigInt(Date.parse(at)) * 1_000_000n}`;

/** The provider as the conventions name it: bridle's scripted model is no provider's. */
const providerOf = (model: string) => (model.startsWith('scripted') ? 'bridle.scripted' : 'openai');

/** The conventions' message shape (`gen_ai.input.messages`): a role and its parts. */
function conventionMessages(messages: readonly ModelMessage[]): unknown[] {
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

const FINISH: Record<string, string> = { stop: 'stop', 'tool-calls': 'tool_call', length: 'length', 'content-filter': 'content_filter', refusal: 'refusal' };

function outputMessage(e: EntryOf<'assistant/message'>): unknown {
  const parts: unknown[] = [];
  for (const b of e.blocks) {
    if (b.type === 'text') parts.push({ type: 'text', content: b.text });
    else if (b.type === 'reasoning') parts.push({ type: 'reasoning', content: b.text });
    else parts.push({ type: 'tool_call', id: b.id, name: b.name, arguments: b.arguments });
  }
  return { role: 'assistant', parts, finish_reason: e.finish.kind === 'ok' ? FINISH[e.finish.reason] : e.finish.kind === 'error' ? 'error' : 'aborted' };
}

/** The events every entry kind that is not a span of its own becomes, on the span it belongs to. */
function eventOf(e: Entry): TraceEvent | undefined {
  const at = nanosOf(e.at);
  const ev = (name: string, attributes: TraceAttributes = {}): TraceEvent => ({ name, timeUnixNano: at, attributes: { 'bridle.seq': e.seq, ...attributes } });
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

/** What `traceOf` carries from one entry to the next: the spans so far, and the ones still open by id. */
interface Tracer {
  readonly id: string;
  readonly traceId: string;
  /** The span the session's own span hangs under, when it is a child or given a `traceparent`. */
  readonly parentSpanId: string | undefined;
  readonly lastAt: string;
  readonly options: TraceOptions;
  readonly spans: TraceSpan[];
  readonly root: TraceSpan;
  readonly turns: Map<string, TraceSpan>;
  readonly chats: Map<string, TraceSpan>;
  readonly calls: Map<string, TraceSpan>;
  compaction: TraceSpan | undefined;
  /** The model the next request goes to: `session/start`'s, then each header's. */
  model: string;
  header: EntryOf<'request/header'> | undefined;
}

/** What opening a span needs: the ids it is made of, where it ends until it is closed, the list it joins. */
type SpanSite = Pick<Tracer, 'id' | 'traceId' | 'parentSpanId' | 'lastAt' | 'spans'>;

/** Opens a span at `e`, ending at the log's last entry until it is closed, under `parent` (none: the session's own parent). */
function openSpan(t: SpanSite, e: Entry, role: string, name: string, kind: TraceSpan['kind'], parent: TraceSpan | undefined, attributes: TraceAttributes): TraceSpan {
  const s: TraceSpan = {
    traceId: t.traceId,
    spanId: spanIdOf(t.id, e.seq, role),
    ...(parent ? { parentSpanId: parent.spanId } : t.parentSpanId ? { parentSpanId: t.parentSpanId } : {}),
    name,
    kind,
    startTimeUnixNano: nanosOf(e.at),
    endTimeUnixNano: t.lastAt,
    attributes: { 'bridle.seq': e.seq, ...attributes },
    events: [],
    status: { code: 'unset' },
    links: [],
  };
  t.spans.push(s);
  return s;
}

function closeSpan(s: TraceSpan, e: Entry, error?: string, message?: string): void {
  s.endTimeUnixNano = nanosOf(e.at);
  s.status = error ? { code: 'error', ...(message ? { message } : {}) } : { code: 'ok' };
  if (error) s.attributes['error.type'] = error;
}

/** Contract: pure and total over a log that parsed; the same entries (and children) give the same spans, in the same order. */
export function traceOf(entries: readonly Entry[], options: TraceOptions = {}): TraceSpan[] {
  const start = entries[0];
  if (!start || start.kind !== 'session/start') return [];
  const t = newTracer(start, entries[entries.length - 1]!, options);
  const projection = options.content ? new Projection() : undefined;
  for (const e of entries) {
    const turn = 'turn' in e && typeof e.turn === 'string' ? t.turns.get(e.turn) : undefined;
    switch (e.kind) {
      case 'turn/start':
      case 'turn/end':
        traceTurn(t, e, turn);
        break;
      case 'request/header':
      case 'step/start':
      case 'assistant/message':
        traceChat(t, e, turn, projection);
        break;
      case 'tool/call':
      case 'tool/result':
        traceTool(t, e, turn);
        break;
      case 'compaction/start':
      case 'compaction/end':
        traceCompaction(t, e, turn);
        break;
      default:
        traceEvent(t, e, turn);
    }
    projection?.apply(e);
  }
  return t.spans;
}

/** The session's span (`invoke_agent bridle`), and the walk's state around it. */
function newTracer(start: EntryOf<'session/start'>, last: Entry, options: TraceOptions): Tracer {
  const context = contextOf(start, options);
  const site: SpanSite = { id: start.id, traceId: context.traceId, parentSpanId: context.parentSpanId, lastAt: nanosOf(last.at), spans: [] };
  const root = openSpan(site, start, 'session', 'invoke_agent bridle', 'internal', undefined, {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'bridle',
    'gen_ai.conversation.id': start.id,
    'gen_ai.provider.name': providerOf(start.model),
    'gen_ai.request.model': start.model,
    'bridle.depth': start.depth,
    ...(start.parent ? { 'bridle.parent': start.parent } : {}),
  });
  return { ...site, options, root, turns: new Map(), chats: new Map(), calls: new Map(), compaction: undefined, model: start.model, header: undefined };
}

/** A turn's span (`turn tN`), under the session's: its reason and steps, an error's code. */
function traceTurn(t: Tracer, e: EntryOf<'turn/start' | 'turn/end'>, turn: TraceSpan | undefined): void {
  if (e.kind === 'turn/start') {
    t.turns.set(e.turn, openSpan(t, e, 'turn', `turn ${e.turn}`, 'internal', t.root, { 'bridle.turn.id': e.turn }));
    return;
  }
  if (!turn) return;
  turn.attributes['bridle.turn.reason'] = e.reason;
  turn.attributes['bridle.turn.steps'] = e.steps;
  closeSpan(turn, e, e.reason === 'error' ? (e.code ?? 'error') : undefined, e.cause);
}

/** A step's model request (`chat {model}`), a client span under its turn: the request as its header says, then the answer. */
function traceChat(t: Tracer, e: EntryOf<'request/header' | 'step/start' | 'assistant/message'>, turn: TraceSpan | undefined, projection: Projection | undefined): void {
  const options = t.options;
  if (e.kind === 'request/header') {
    t.header = e;
    t.model = e.params.model;
    const chat = t.chats.get(e.step);
    if (chat) Object.assign(chat.attributes, requestAttributes(e, t.model), options.content ? { 'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: e.system }]) } : {});
    if (chat) chat.name = `chat ${t.model}`;
    return;
  }
  if (e.kind === 'step/start') {
    const model = t.model;
    const chat = openSpan(t, e, 'chat', `chat ${model}`, 'client', turn, { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': providerOf(model), 'bridle.step.id': e.step, ...(t.header ? requestAttributes(t.header, model) : { 'gen_ai.request.model': model }) });
    if (projection) chat.attributes['gen_ai.input.messages'] = JSON.stringify(conventionMessages(projection.messages));
    t.chats.set(e.step, chat);
    return;
  }
  const chat = t.chats.get(e.step);
  if (!chat) return;
  const u = e.usage;
  if (u) {
    chat.attributes['gen_ai.usage.input_tokens'] = u.inputTokens;
    chat.attributes['gen_ai.usage.output_tokens'] = u.outputTokens;
    if (u.cachedTokens !== undefined) chat.attributes['gen_ai.usage.cache_read.input_tokens'] = u.cachedTokens;
    if (u.reasoningTokens !== undefined) chat.attributes['gen_ai.usage.reasoning.output_tokens'] = u.reasoningTokens;
  }
  // The conventions' time to first chunk, in seconds, where the log holds it (ADR 0079).
  if (e.firstChunkMs !== undefined) chat.attributes['gen_ai.response.time_to_first_chunk'] = e.firstChunkMs / 1000;
  if (e.finish.kind === 'ok') chat.attributes['gen_ai.response.finish_reasons'] = [FINISH[e.finish.reason] ?? e.finish.reason];
  if (options.content) chat.attributes['gen_ai.output.messages'] = JSON.stringify([outputMessage(e)]);
  if (e.interrupted) chat.attributes['bridle.interrupted'] = true;
  closeSpan(chat, e, e.finish.kind === 'error' ? e.finish.code : e.finish.kind === 'aborted' ? ModelCode.ABORTED : undefined, e.finish.kind === 'error' ? e.finish.message : undefined);
}

/** A call's span (`execute_tool {name}`) under its turn, from `tool/call` to its result. */
function traceTool(t: Tracer, e: EntryOf<'tool/call' | 'tool/result'>, turn: TraceSpan | undefined): void {
  if (e.kind === 'tool/call') {
    const call = openSpan(t, e, 'tool', `execute_tool ${e.name}`, 'internal', turn, {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': e.name,
      'gen_ai.tool.call.id': e.toolCallId,
      'gen_ai.tool.type': 'function',
      'bridle.call.id': e.callId,
      ...(t.options.content ? { 'gen_ai.tool.call.arguments': e.arguments } : {}),
    });
    t.calls.set(e.callId, call);
    return;
  }
  const call = t.calls.get(e.callId);
  if (!call) return;
  const outcome = e.verdict === 'uncertain' ? 'uncertain' : e.status;
  call.attributes['bridle.tool.outcome'] = outcome;
  if (t.options.content) call.attributes['gen_ai.tool.call.result'] = e.content;
  closeSpan(call, e, outcome === 'ok' ? undefined : (e.code ?? outcome));
}

/** A compaction's span, under its turn (or the session's, between turns). */
function traceCompaction(t: Tracer, e: EntryOf<'compaction/start' | 'compaction/end'>, turn: TraceSpan | undefined): void {
  if (e.kind === 'compaction/start') {
    t.compaction = openSpan(t, e, 'compaction', 'compaction', 'internal', turn ?? t.root, { 'bridle.compaction.trigger': e.trigger, 'bridle.compaction.estimated_tokens': e.estimatedTokens, 'bridle.compaction.window': e.window });
    return;
  }
  const compaction = t.compaction;
  if (!compaction) return;
  Object.assign(compaction.attributes, { 'bridle.compaction.outcome': e.outcome, 'bridle.compaction.tokens_before': e.tokensBefore, 'bridle.compaction.tokens_after': e.tokensAfter });
  closeSpan(compaction, e, e.outcome === 'failed' ? 'COMPACTION_FAILED' : undefined);
  t.compaction = undefined;
}

/**
 * Every other entry is an event, on its call's span, else its turn's, else the session's; a `subagent/start`
 * whose child's log the caller can read also brings the child's spans, hung under that span and linked to it.
 */
function traceEvent(t: Tracer, e: Entry, turn: TraceSpan | undefined): void {
  const ev = eventOf(e);
  if (!ev) return;
  const on = 'callId' in e && typeof e.callId === 'string' ? (t.calls.get(e.callId) ?? turn ?? t.root) : (turn ?? t.root);
  on.events.push(ev);
  if (e.kind !== 'subagent/start') return;
  const child = t.options.children?.(e.child);
  if (!child || child.length === 0) return;
  const traceId = t.traceId;
  const sub = traceOf(child, { ...t.options, traceId, parentSpanId: on.spanId });
  if (sub[0]) sub[0].links.push({ traceId, spanId: on.spanId, attributes: { 'bridle.link': 'subagent/start', 'bridle.seq': e.seq } });
  t.spans.push(...sub);
}

function requestAttributes(h: EntryOf<'request/header'>, model: string): TraceAttributes {
  return {
    'gen_ai.request.model': model,
    // The wire, where the header names it (a Responses or Anthropic session); else the model id tells.
    ...(h.params.reasoning ? { 'gen_ai.provider.name': h.params.reasoning === 'anthropic' ? 'anthropic' : 'openai' } : {}),
    ...(h.params.maxTokens !== undefined ? { 'gen_ai.request.max_tokens': h.params.maxTokens } : {}),
    ...(h.params.temperature !== undefined ? { 'gen_ai.request.temperature': h.params.temperature } : {}),
  };
}
