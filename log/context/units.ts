/**
 * Units: what compaction keeps or summarizes as a whole. A user message is a
 * unit; an assistant message and the results of its calls are one unit, so
 * an observation never leaves its call (I9).
 */
import { deriveMessages } from '../derive-messages.js';
import { coverOf, type Visible } from '../visible.js';
import type { ModelMessage } from '../messages.js';
import { messageChars } from './tokens.js';

export interface Unit {
  items: Visible[];
  /** The seq span the unit covers: a replace citing it shadows exactly these items. */
  start: number;
  end: number;
  /** The unit rendered on its own; the units' messages, concatenated, are the projection's. */
  messages: ModelMessage[];
  chars: number;
}

const callIds = (e: Visible): Set<string> =>
  new Set(e.kind === 'assistant/message' ? e.blocks.flatMap((b) => (b.type === 'tool-call' ? [b.id] : [])) : []);

/** Contract: pure; every visible item lands in exactly one unit, in order. */
export function unitsOf(visible: readonly Visible[]): Unit[] {
  const groups: Visible[][] = [];
  let calls: { step: string; ids: Set<string> } | undefined;
  for (const e of visible) {
    const joins = e.kind === 'tool/result' && calls !== undefined && calls.step === e.step && calls.ids.has(e.toolCallId);
    if (joins) {
      groups[groups.length - 1]!.push(e);
      continue;
    }
    groups.push([e]);
    calls = e.kind === 'assistant/message' ? { step: e.step, ids: callIds(e) } : undefined;
  }
  return groups.map((items) => {
    const messages = deriveMessages(items);
    let start = Infinity;
    let end = 0;
    for (const i of items) {
      const c = coverOf(i);
      start = Math.min(start, c.start);
      end = Math.max(end, c.end);
    }
    return { items, start, end, messages, chars: messages.reduce((n, m) => n + messageChars(m), 0) };
  });
}

/** Whether the unit is only an earlier summary: summarizing it alone gains nothing. */
export const isSummaryOnly = (u: Unit): boolean => u.items.length === 1 && u.items[0]!.kind === 'user/message' && u.items[0]!.origin === 'summary';
