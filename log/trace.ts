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
import { ModelCode } from './entry-values.js';
import { AGENT_NAME, conventionMessages, eventNamed, FINISH, Operation, outputMessage, providerOf, requestAttributes, SpanName, type TraceAttributes } from './trace-conventions.js';
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
  return { traceId: options.traceId ?? traceIdOf(start.id), ...(options.parentSpanId ? { parentSpanId: options.parentSpanId } : {}) };
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

/** The last time `nanosOf` read: an entry's is asked for three times and more (its spans' start and end, the projector's last). */
let last = { at: '1970-01-01T00:00:00.000Z', nanos: '0' };
/**
 * An entry's time as nanoseconds since the epoch, in decimal: its whole milliseconds and six zeros. It runs for every
 * entry and span, so not through a BigInt (ADR 0106); a time that is not one (NaN) still fails as the BigInt did.
 */
const nanosOf = (at: string) => {
  if (at === last.at) return last.nanos;
  const ms = Date.parse(at);
  const nanos = !Number.isInteger(ms) ? `${BigInt(ms) * 1_000_000n}` : ms === 0 ? '0' : `${ms}000000`;
  last = { at, nanos };
  return nanos;
};

/** An entry's event (the conventions' name and attributes, `trace-conventions.ts`), at its time, with its seq. */
function eventOf(e: Entry): TraceEvent | undefined {
  const named = eventNamed(e);
  return named && { name: named.name, timeUnixNano: nanosOf(e.at), attributes: { 'bridle.seq': e.seq, ...named.attributes } };
}

/** Contract: pure and total over a log that parsed; the same entries (and children) give the same spans, in the same order. */
export function traceOf(entries: readonly Entry[], options: TraceOptions = {}): TraceSpan[] {
  const p = new TraceProjector(options);
  for (const e of entries) p.add(e);
  return p.spans();
}

type Link = TraceSpan['links'][number];

/**
 * `traceOf`, an entry at a time (ADR 0080): the one projection, resumable. Fed a session's entries in order it
 * holds exactly the spans `traceOf` of those entries gives (`spans()`), and it says which spans have ended since
 * it was last asked (`ended()`): a span that ended does not change, so live export projects each entry once
 * instead of the whole log at each batch. A subagent's spans come from a projector of its own, made at its
 * `subagent/start` (fed there with what `children` gives, and later by whoever calls `onChild`'s).
 */
export class TraceProjector {
  private readonly slots: Array<TraceSpan | TraceProjector> = [];
  private readonly fresh: TraceSpan[] = [];
  private readonly subs: TraceProjector[] = [];
  private state: 'new' | 'open' | 'none' = 'new';
  private id = '';
  private traceId = '';
  private parentSpanId: string | undefined;
  private lastAt = '0';
  private root: TraceSpan | undefined;
  private readonly turns = new Map<string, TraceSpan>();
  private readonly chats = new Map<string, TraceSpan>();
  private readonly calls = new Map<string, TraceSpan>();
  private compaction: TraceSpan | undefined;
  private model = '';
  private header: EntryOf<'request/header'> | undefined;
  private readonly projection: Projection | undefined;

  constructor(
    private readonly options: TraceOptions & { onChild?: (child: string, sub: TraceProjector) => void } = {},
    private readonly link?: Link,
  ) {
    this.projection = options.content ? new Projection() : undefined;
  }

  /** Every span so far, in `traceOf`'s order; a span not yet ended ends at the last entry seen. */
  spans(): TraceSpan[] {
    const out: TraceSpan[] = [];
    this.spansInto(out);
    return out;
  }

  /** The spans and the subagents' into one array: spreading a subagent's spans into a push overflows the stack past about 120,000. */
  private spansInto(out: TraceSpan[]): void {
    for (const s of this.slots) {
      if (s instanceof TraceProjector) s.spansInto(out);
      else {
        if (s.status.code === 'unset') s.endTimeUnixNano = this.lastAt;
        out.push(s);
      }
    }
  }

  /** The spans (this session's and its subagents') that ended since the last call, each once; with `all`, the rest too, ending at the last entry seen. */
  ended(all = false): TraceSpan[] {
    const out: TraceSpan[] = [];
    this.endedInto(out, all);
    return out;
  }

  private endedInto(out: TraceSpan[], all: boolean): void {
    for (const s of this.fresh) out.push(s);
    this.fresh.length = 0;
    for (const sub of this.subs) sub.endedInto(out, all);
    if (all) for (const s of this.slots) if (!(s instanceof TraceProjector) && s.status.code === 'unset') out.push({ ...s, endTimeUnixNano: this.lastAt });
  }

  add(e: Entry): void {
    if (this.state === 'none') return;
    if (this.state === 'new') {
      if (e.kind !== 'session/start') {
        this.state = 'none';
        return;
      }
      this.begin(e);
    }
    this.lastAt = nanosOf(e.at);
    this.step(e);
    this.projection?.apply(e);
  }

  private open(e: Entry, role: string, name: string, kind: TraceSpan['kind'], parent: TraceSpan | undefined, attributes: TraceAttributes): TraceSpan {
    const s: TraceSpan = {
      traceId: this.traceId,
      spanId: spanIdOf(this.id, e.seq, role),
      ...(parent ? { parentSpanId: parent.spanId } : this.parentSpanId ? { parentSpanId: this.parentSpanId } : {}),
      name,
      kind,
      startTimeUnixNano: nanosOf(e.at),
      endTimeUnixNano: nanosOf(e.at),
      attributes: { 'bridle.seq': e.seq, ...attributes },
      events: [],
      status: { code: 'unset' },
      links: [],
    };
    this.slots.push(s);
    return s;
  }

  private close(s: TraceSpan, e: Entry, error?: string, message?: string): void {
    if (s.status.code === 'unset') this.fresh.push(s);
    s.endTimeUnixNano = nanosOf(e.at);
    s.status = error ? { code: 'error', ...(message ? { message } : {}) } : { code: 'ok' };
    if (error) s.attributes['error.type'] = error;
  }

  private begin(start: EntryOf<'session/start'>): void {
    this.state = 'open';
    this.id = start.id;
    const context = contextOf(start, this.options);
    this.traceId = context.traceId;
    this.parentSpanId = context.parentSpanId;
    this.model = start.model;
    this.root = this.open(start, 'session', SpanName.session, 'internal', undefined, {
      'gen_ai.operation.name': Operation.INVOKE_AGENT,
      'gen_ai.agent.name': AGENT_NAME,
      'gen_ai.conversation.id': start.id,
      'gen_ai.provider.name': providerOf(start.model),
      'gen_ai.request.model': start.model,
      'bridle.depth': start.depth,
      ...(start.parent ? { 'bridle.parent': start.parent } : {}),
    });
    if (this.link) this.root.links.push(this.link);
  }

  /** One entry into the spans, by its family; `turn` is the span of the turn it names, if any. */
  private step(e: Entry): void {
    const turn = 'turn' in e && typeof e.turn === 'string' ? this.turns.get(e.turn) : undefined;
    switch (e.kind) {
      case 'session/start':
        return;
      case 'turn/start':
      case 'turn/end':
        return this.turnEntry(e, turn);
      case 'request/header':
      case 'step/start':
      case 'assistant/message':
        return this.modelEntry(e, turn);
      case 'tool/call':
      case 'tool/result':
        return this.toolEntry(e, turn);
      case 'compaction/start':
      case 'compaction/end':
        return this.compactionEntry(e, turn);
      default:
        return this.eventEntry(e, turn);
    }
  }

  private turnEntry(e: EntryOf<'turn/start' | 'turn/end'>, turn: TraceSpan | undefined): void {
    if (e.kind === 'turn/start') {
      this.turns.set(e.turn, this.open(e, 'turn', SpanName.turn(e.turn), 'internal', this.root!, { 'bridle.turn.id': e.turn }));
      return;
    }
    if (!turn) return;
    turn.attributes['bridle.turn.reason'] = e.reason;
    turn.attributes['bridle.turn.steps'] = e.steps;
    this.close(turn, e, e.reason === 'error' ? (e.code ?? 'error') : undefined, e.cause);
  }

  /** A step's model request: the `chat` span, named and attributed after the request header that precedes it. */
  private modelEntry(e: EntryOf<'request/header' | 'step/start' | 'assistant/message'>, turn: TraceSpan | undefined): void {
    switch (e.kind) {
      case 'request/header': {
        this.header = e;
        this.model = e.params.model;
        const chat = this.chats.get(e.step);
        if (chat) Object.assign(chat.attributes, requestAttributes(e, this.model), this.options.content ? { 'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: e.system }]) } : {});
        if (chat) chat.name = SpanName.chat(this.model);
        return;
      }
      case 'step/start': {
        const model = this.model;
        const chat = this.open(e, 'chat', SpanName.chat(model), 'client', turn, { 'gen_ai.operation.name': Operation.CHAT, 'gen_ai.provider.name': providerOf(model), 'bridle.step.id': e.step, ...(this.header ? requestAttributes(this.header, model) : { 'gen_ai.request.model': model }) });
        if (this.projection) chat.attributes['gen_ai.input.messages'] = JSON.stringify(conventionMessages(this.projection.messages));
        this.chats.set(e.step, chat);
        return;
      }
      case 'assistant/message': {
        const chat = this.chats.get(e.step);
        if (chat) this.answered(chat, e);
        return;
      }
    }
  }

  private answered(chat: TraceSpan, e: EntryOf<'assistant/message'>): void {
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
    if (this.options.content) chat.attributes['gen_ai.output.messages'] = JSON.stringify([outputMessage(e)]);
    if (e.interrupted) chat.attributes['bridle.interrupted'] = true;
    this.close(chat, e, e.finish.kind === 'error' ? e.finish.code : e.finish.kind === 'aborted' ? ModelCode.ABORTED : undefined, e.finish.kind === 'error' ? e.finish.message : undefined);
  }

  private toolEntry(e: EntryOf<'tool/call' | 'tool/result'>, turn: TraceSpan | undefined): void {
    const content = this.options.content;
    if (e.kind === 'tool/call') {
      const call = this.open(e, 'tool', SpanName.tool(e.name), 'internal', turn, {
        'gen_ai.operation.name': Operation.EXECUTE_TOOL,
        'gen_ai.tool.name': e.name,
        'gen_ai.tool.call.id': e.toolCallId,
        'gen_ai.tool.type': 'function',
        'bridle.call.id': e.callId,
        ...(content ? { 'gen_ai.tool.call.arguments': e.arguments } : {}),
      });
      this.calls.set(e.callId, call);
      return;
    }
    const call = this.calls.get(e.callId);
    // A result for a call that already ended is a compaction's rewrite of it (`surfaceOp` replace): the call's span keeps what the call did.
    if (!call || call.status.code !== 'unset') return;
    const outcome = e.verdict === 'uncertain' ? 'uncertain' : e.status;
    call.attributes['bridle.tool.outcome'] = outcome;
    if (content) call.attributes['gen_ai.tool.call.result'] = e.content;
    this.close(call, e, outcome === 'ok' ? undefined : (e.code ?? outcome));
  }

  private compactionEntry(e: EntryOf<'compaction/start' | 'compaction/end'>, turn: TraceSpan | undefined): void {
    if (e.kind === 'compaction/start') {
      this.compaction = this.open(e, 'compaction', SpanName.compaction, 'internal', turn ?? this.root!, { 'bridle.compaction.trigger': e.trigger, 'bridle.compaction.estimated_tokens': e.estimatedTokens, 'bridle.compaction.window': e.window });
      return;
    }
    if (!this.compaction) return;
    Object.assign(this.compaction.attributes, { 'bridle.compaction.outcome': e.outcome, 'bridle.compaction.tokens_before': e.tokensBefore, 'bridle.compaction.tokens_after': e.tokensAfter });
    this.close(this.compaction, e, e.outcome === 'failed' ? 'COMPACTION_FAILED' : undefined);
    this.compaction = undefined;
  }

  /** Every other entry is at most an event, on its call's span, else its turn's, else the session's; a subagent's start also hangs its projector there. */
  private eventEntry(e: Entry, turn: TraceSpan | undefined): void {
    const ev = eventOf(e);
    if (!ev) return;
    const root = this.root!;
    const on = 'callId' in e && typeof e.callId === 'string' ? (this.calls.get(e.callId) ?? turn ?? root) : (turn ?? root);
    on.events.push(ev);
    if (e.kind === 'subagent/start') this.subagent(e, on);
  }

  private subagent(e: EntryOf<'subagent/start'>, on: TraceSpan): void {
    const { onChild, ...rest } = this.options;
    const sub = new TraceProjector({ ...rest, ...(onChild ? { onChild } : {}), traceId: this.traceId, parentSpanId: on.spanId }, { traceId: this.traceId, spanId: on.spanId, attributes: { 'bridle.link': 'subagent/start', 'bridle.seq': e.seq } });
    this.slots.push(sub);
    this.subs.push(sub);
    for (const c of this.options.children?.(e.child) ?? []) sub.add(c);
    onChild?.(e.child, sub);
  }
}
