/**
 * The projection from the log to what a model sees. `deriveMessages` is the
 * pure fold; `Projection` is the same fold kept incrementally so a long
 * session does not re-read its whole log at every step.
 */
import type { Entry, EntryOf } from './entries.js';
import type { Verdict } from './entry-values.js';
import type { CarriedReasoning, ModelMessage } from './messages.js';
import { coverOf, isVisible, type Visible } from './visible.js';

const within = (e: Visible, start: number, end: number): boolean => {
  const c = coverOf(e);
  return c.start >= start && c.end <= end;
};

/**
 * The line that tells the model how far the harness vouches for what follows. Nothing for an absent or
 * `confirmed` verdict, so logs that never set one project exactly as they always did.
 */
export function verdictLine(v: Verdict | undefined): string {
  return v === 'uncertain' || v === 'rejected' ? `[verdict: ${v}]\n` : '';
}

/** How a user-side entry reads to the model: its origin is rendered, so a summary never passes for the user's words. */
export function renderUserText(e: EntryOf<'user/message'>): string {
  return verdictLine(e.verdict) + renderOrigin(e);
}

function renderOrigin(e: EntryOf<'user/message'>): string {
  switch (e.origin) {
    case 'summary':
      return `[Summary of earlier work in this session, written by the harness]\n${e.text}`;
    case 'subagent':
      return `[Report from a subagent]\n${e.text}`;
    case 'resume':
    case 'system':
      return `[Harness note]\n${e.text}`;
    default:
      return e.text;
  }
}

function renderAssistant(e: EntryOf<'assistant/message'>): ModelMessage | undefined {
  let text = '';
  let reasoning = '';
  const toolCalls: { id: string; name: string; arguments: string }[] = [];
  const carried: CarriedReasoning[] = [];
  for (const b of e.blocks) {
    if (b.type === 'text') text += b.text;
    else if (b.type === 'reasoning') {
      reasoning += b.text;
      if (b.provider !== undefined) carried.push({ text: b.text, provider: b.provider, data: b.data });
    } else toolCalls.push({ id: b.id, name: b.name, arguments: b.arguments });
  }
  if (!text && toolCalls.length === 0) return undefined;
  const m: ModelMessage = { role: 'assistant', content: text || null };
  if (reasoning) m.reasoning = reasoning;
  if (carried.length) m.carried = carried;
  if (toolCalls.length) m.toolCalls = toolCalls;
  return m;
}

/** Contract: pure; the message `e` alone projects to (`deriveMessages([e])`'s one message), none for an empty answer. */
export function messageOf(e: Visible): ModelMessage | undefined {
  if (e.kind === 'user/message') return { role: 'user', content: renderUserText(e) };
  if (e.kind === 'assistant/message') return renderAssistant(e);
  return { role: 'tool', toolCallId: e.toolCallId, content: verdictLine(e.verdict) + e.content };
}

/**
 * Incremental projection. Contract: after `apply`ing entries e1..en in order,
 * `messages` equals `deriveMessages([e1..en])`.
 */
export class Projection {
  private items: Visible[] = [];
  private out: ModelMessage[] = [];
  /** For the newest step with tool calls: where its assistant message sits and its call order. */
  private open?: OpenCalls;
  /** The entry placed last and the message it made: what `placedMessageOf` hands back instead of building it again. */
  private lastEntry?: Visible;
  private lastMessage?: ModelMessage;

  get messages(): readonly ModelMessage[] {
    return this.out;
  }

  /** The entries that currently surface: in log order, each replacement in the place of the first item it shadows. */
  get visible(): readonly Visible[] {
    return this.items;
  }

  apply(e: Entry): void {
    if (!isVisible(e)) return;
    if (e.surfaceOp !== 'append') {
      const { start, end } = e.surfaceOp;
      const first = this.items.findIndex((i) => within(i, start, end));
      const kept = this.items.filter((i) => !within(i, start, end));
      kept.splice(first < 0 ? kept.length : first, 0, e);
      this.rebuild(kept);
      return;
    }
    this.items.push(e);
    this.place(e);
  }

  private rebuild(items: Visible[]): void {
    this.items = [];
    this.out = [];
    this.open = undefined;
    for (const i of items) {
      this.items.push(i);
      this.place(i);
    }
  }

  /**
   * The message `e` makes: the one this projection built when `e` is the entry it placed last (as it is for a
   * recorder's listener, which hears an entry after the projection applied it), else one built afresh. Equal either
   * way: a placed message is never changed after it is built.
   */
  placedMessageOf(e: Visible): ModelMessage | undefined {
    return e === this.lastEntry ? this.lastMessage : messageOf(e);
  }

  private place(e: Visible): void {
    const msg = messageOf(e);
    this.lastEntry = e;
    this.lastMessage = msg;
    if (!msg) return;
    if (e.kind !== 'tool/result') {
      this.out.push(msg);
      if (e.kind === 'assistant/message' && msg.role === 'assistant' && msg.toolCalls) {
        this.open = { step: e.step, at: this.out.length - 1, calls: msg.toolCalls, placed: [] };
      }
      return;
    }
    const o = this.open;
    const rank = o && o.step === e.step ? rankOf(o, e.toolCallId) : undefined;
    if (!o || rank === undefined) {
      this.out.push(msg);
      return;
    }
    // Results are logged as they complete; the model reads them in call order (I2). Most come in order, so most go
    // at the end: pushed there, without the array of removed items a `splice` returns.
    const placed = o.placed;
    let pos = 0;
    while (pos < placed.length && placed[pos]! <= rank) pos++;
    insertAt(placed, pos, rank);
    insertAt(this.out, o.at + 1 + pos, msg);
  }
}

/** The newest step with tool calls: where its assistant message sits, its calls, the ranks of the results placed. */
interface OpenCalls {
  step: string;
  at: number;
  calls: readonly { id: string }[];
  /** By id, built only for an answer of many calls. */
  order?: Map<string, number>;
  placed: number[];
}

/** Past this many calls in one answer a result's rank is looked up by id, not found by a walk over the calls. */
const WALKED_CALLS = 32;

/** The position of call `id` in its answer, the last where an id repeats (as a map by id has it); none: not one of them. */
function rankOf(o: OpenCalls, id: string): number | undefined {
  const calls = o.calls;
  if (calls.length > WALKED_CALLS) {
    o.order ??= new Map(calls.map((c, i) => [c.id, i]));
    return o.order.get(id);
  }
  for (let i = calls.length - 1; i >= 0; i--) if (calls[i]!.id === id) return i;
  return undefined;
}

function insertAt<T>(list: T[], at: number, item: T): void {
  if (at === list.length) list.push(item);
  else list.splice(at, 0, item);
}

/** Contract: pure; the messages a model request built at the end of `entries` must carry (I1). */
export function deriveMessages(entries: Iterable<Entry>): ModelMessage[] {
  const p = new Projection();
  for (const e of entries) p.apply(e);
  return p.messages.slice();
}
