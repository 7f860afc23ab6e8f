/**
 * What a forked child is seeded with: its parent's completed turns, up to the
 * last `turn/end`, rendered as one harness note. Never the running turn: the
 * half-finished step that asked for the fork holds a call without a result,
 * and a child handed that would see a dangling call.
 */
import { deriveMessages } from './derive-messages.js';
import type { Entry } from './entries.js';
import type { ModelMessage } from './messages.js';

function renderMessage(m: ModelMessage): string {
  if (m.role === 'user') return `USER:\n${m.content}`;
  if (m.role === 'tool') return `TOOL RESULT (${m.toolCallId}):\n${m.content}`;
  const calls = (m.toolCalls ?? []).map((c) => `CALL ${c.name}(${c.arguments}) [${c.id}]`).join('\n');
  return `ASSISTANT:\n${[m.content ?? '', calls].filter(Boolean).join('\n')}`;
}

/** Contract: pure; the parent's completed turns (up to the last `turn/end`), rendered; empty when none has ended. */
export function renderCompletedTurns(entries: readonly Entry[]): string {
  const last = entries.findLastIndex((e) => e.kind === 'turn/end');
  if (last < 0) return '';
  return deriveMessages(entries.slice(0, last + 1)).map(renderMessage).join('\n\n');
}

/** The text of the last assistant message with any, at or after `from`: what a child's turn ended on. */
export function finalText(entries: readonly Entry[], from = 0): string {
  for (let i = entries.length - 1; i >= from; i--) {
    const e = entries[i]!;
    if (e.kind === 'assistant/message') {
      const text = e.blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
      if (text) return text;
    }
  }
  return '';
}
