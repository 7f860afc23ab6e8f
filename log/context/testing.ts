/** A small log builder for tests of the context modules: valid entries, gapless seqs, no session around them. */
import { Entry, type Draft } from '../entries.js';
import { nthCall, nthStep } from '../ids.js';

const AT = '2026-01-01T00:00:00.000Z';

export class LogBuilder {
  readonly entries: Entry[] = [];

  add(d: Draft): Entry {
    const e = Entry.parse({ seq: this.entries.length + 1, at: AT, ...d });
    this.entries.push(e);
    return e;
  }

  user(turn: string, text: string, origin: 'user' | 'steer' | 'summary' = 'user'): Entry {
    return this.add({ kind: 'user/message', turn, text, origin, surfaceOp: 'append' });
  }

  /** One step: an answer (text and/or calls), then results in `order` (default call order). */
  step(turn: string, n: number, o: { text?: string; calls?: { name: string; result: string }[]; order?: number[] } = {}): void {
    const step = nthStep(turn, n);
    const calls = o.calls ?? [];
    this.add({ kind: 'step/start', turn, step });
    this.add({
      kind: 'assistant/message',
      turn,
      step,
      blocks: [...(o.text ? [{ type: 'text' as const, text: o.text }] : []), ...calls.map((c, i) => ({ type: 'tool-call' as const, id: `${step}-${i}`, name: c.name, arguments: '{}' }))],
      finish: { kind: 'ok', reason: calls.length ? 'tool-calls' : 'stop' },
      surfaceOp: 'append',
    });
    calls.forEach((c, i) => this.add({ kind: 'tool/call', turn, step, callId: nthCall(step, i + 1), toolCallId: `${step}-${i}`, name: c.name, arguments: '{}' }));
    calls.forEach((c, i) => this.add({ kind: 'tool/dispatch', turn, step, callId: nthCall(step, i + 1), name: c.name, idempotent: true }));
    for (const i of o.order ?? calls.map((_, i) => i)) {
      const c = calls[i]!;
      this.add({ kind: 'tool/result', turn, step, callId: nthCall(step, i + 1), toolCallId: `${step}-${i}`, name: c.name, status: 'ok', content: c.result, surfaceOp: 'append' });
    }
    this.add({ kind: 'step/end', turn, step, reason: calls.length ? 'tool-calls' : 'stop' });
  }
}

/** Every tool message answers a call made before it, and every call is answered: what a provider insists on. */
export function pairingProblems(messages: readonly import('../messages.js').ModelMessage[]): string[] {
  const problems: string[] = [];
  const open = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (m.role === 'assistant') {
      if (open.size) problems.push(`message ${i}: calls ${[...open].join(', ')} unanswered before the next answer`);
      open.clear();
      for (const c of m.toolCalls ?? []) open.add(c.id);
    } else if (m.role === 'tool') {
      if (!open.delete(m.toolCallId)) problems.push(`message ${i}: result for ${m.toolCallId} without its call`);
    } else if (open.size) problems.push(`message ${i}: user message between calls and their results`);
  }
  if (open.size) problems.push(`calls ${[...open].join(', ')} unanswered at the end`);
  return problems;
}
