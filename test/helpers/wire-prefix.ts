/**
 * What a provider's prompt cache sees of a request body, per wire: the head (system prompt and tools, which
 * a cache-stable session never changes) and the conversation (messages or input items, which only grow
 * between compactions). Anthropic's `cache_control` marks are left out of both: they move by design.
 */
import type { Wire } from './wire-fake.js';

type Json = Record<string, unknown>;

const unmarked = (v: unknown): unknown => JSON.parse(JSON.stringify(v ?? null), (k, x: unknown) => (k === 'cache_control' ? undefined : x));

export interface WireParts {
  /** System prompt and tools, serialized. */
  head: string;
  /** Messages (chat: after the system message) or input items, each serialized. */
  conversation: string[];
}

/** Contract: pure. */
export function wireParts(wire: Wire, body: Json): WireParts {
  if (wire === 'openai-chat') {
    const messages = (body.messages as Json[]) ?? [];
    const system = messages[0]?.role === 'system' ? messages[0] : null;
    return { head: JSON.stringify([system, body.tools ?? null]), conversation: messages.slice(system ? 1 : 0).map((m) => JSON.stringify(m)) };
  }
  if (wire === 'openai-responses') return { head: JSON.stringify([body.instructions ?? null, body.tools ?? null]), conversation: ((body.input as Json[]) ?? []).map((m) => JSON.stringify(m)) };
  // One Anthropic message may gain blocks (results then a steer fold into one user turn): compare block by block.
  const blocks = ((unmarked(body.messages) as { role: string; content: unknown[] }[]) ?? []).flatMap((m, i) => m.content.map((b) => JSON.stringify([i, m.role, b])));
  return { head: JSON.stringify([unmarked(body.system), unmarked(body.tools)]), conversation: blocks };
}

/** True when `next` is `prev` with more appended (equal counts as extending: nothing was lost). */
export const extendsPrefix = (prev: readonly string[], next: readonly string[]): boolean => next.length >= prev.length && prev.every((p, i) => next[i] === p);

/** Where an Anthropic body carries its `cache_control` marks: `tools`, `system`, and `m<i>.b<j>` for block j of message i; `newest` is the last block. */
export function anthropicMarks(body: Json): { all: string[]; newest: string } {
  const all: string[] = [];
  if (((body.tools as Json[]) ?? []).some((t) => t.cache_control)) all.push('tools');
  if (((body.system as Json[]) ?? []).some((t) => t.cache_control)) all.push('system');
  const messages = (body.messages as { content: Json[] }[]) ?? [];
  messages.forEach((m, i) => m.content.forEach((b, j) => b.cache_control && all.push(`m${i}.b${j}`)));
  const last = messages.length - 1;
  return { all, newest: `m${last}.b${(messages[last]?.content.length ?? 1) - 1}` };
}
