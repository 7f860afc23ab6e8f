/**
 * The live path's projection is `traceOf`, an entry at a time (ADR 0080): fed a golden log entry by entry,
 * `TraceProjector` holds what `traceOf` of each prefix gives, and the spans it says have ended — taken as they
 * end, copied then — are together, with the rest at the end, `traceOf` of the whole log, byte for byte.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Entry } from './entries.js';
import { parseLog } from './parse.js';
import { TraceProjector, traceOf, type TraceSpan } from './trace.js';

const golden = (name: string): Entry[] => parseLog(readFileSync(new URL(`../test/golden/${name}.jsonl`, import.meta.url), 'utf8')).entries;
const LOGS = ['flaky-checkout', 'approvals', 'compaction', 'crash-resume', 'ctrl-c', 'schedule'];
const byId = (spans: readonly TraceSpan[]) => JSON.stringify([...spans].sort((a, b) => a.spanId.localeCompare(b.spanId)));

describe('TraceProjector: traceOf, an entry at a time', () => {
  for (const content of [false, true]) {
    it(`on every golden log${content ? ', content opted in' : ''}: each prefix gives traceOf's spans; what ended, as it ended, plus the rest is traceOf of the log`, () => {
      for (const name of LOGS) {
        const entries = golden(name);
        const p = new TraceProjector({ content });
        const sent: TraceSpan[] = [];
        entries.forEach((e, i) => {
          p.add(e);
          expect(JSON.stringify(p.spans()), `${name} after seq ${e.seq}`).toBe(JSON.stringify(traceOf(entries.slice(0, i + 1), { content })));
          sent.push(...structuredClone(p.ended()));
        });
        sent.push(...p.ended(true));
        const whole = traceOf(entries, { content });
        expect(whole.length, name).toBeGreaterThan(0);
        expect(byId(sent), name).toBe(byId(whole));
      }
    });
  }

  it('a subagent: its projector, fed after the parent subagent/start, gives what traceOf gives with the child log at hand', () => {
    const parent = golden('flaky-checkout');
    const child = golden('approvals');
    const childId = child[0]!.kind === 'session/start' ? child[0]!.id : '';
    const at = parent.findIndex((e) => e.kind === 'tool/call');
    const call = parent[at] as Extract<Entry, { kind: 'tool/call' }>;
    const start = { seq: call.seq, at: call.at, kind: 'subagent/start', callId: call.callId, child: childId, mode: 'in-process' } as unknown as Entry;
    // The subagent/start takes the call's seq; the entries after it move up by one.
    const withChild = [...parent.slice(0, at + 1), ...[start, ...parent.slice(at + 1)].map((e, i) => ({ ...e, seq: call.seq + 1 + i }) as Entry)];
    const whole = traceOf(withChild, { children: (id) => (id === childId ? child : undefined) });
    expect(whole.some((s) => s.attributes['gen_ai.conversation.id'] === childId)).toBe(true);

    let sub: TraceProjector | undefined;
    const p = new TraceProjector({ onChild: (id, s) => id === childId && (sub = s) });
    const sent: TraceSpan[] = [];
    for (const e of withChild) {
      p.add(e);
      sent.push(...structuredClone(p.ended()));
    }
    for (const e of child) {
      sub!.add(e);
      sent.push(...structuredClone(p.ended()));
    }
    expect(JSON.stringify(p.spans())).toBe(JSON.stringify(whole));
    sent.push(...p.ended(true));
    expect(byId(sent)).toBe(byId(whole));
  });

  it('a subagent of 150,000 spans: spans() and ended() hand them all back (spread into a push, they overflowed the stack)', () => {
    const at = '2026-12-02T00:00:00.000Z';
    const n = 150_000;
    const child: Entry[] = [{ kind: 'session/start', seq: 0, at, id: 'kid', model: 'm', depth: 1 } as unknown as Entry];
    for (let i = 1; i <= n; i++) child.push({ kind: 'tool/call', seq: i, at, name: 'noop', toolCallId: `t${i}`, callId: `c${i}`, arguments: {} } as unknown as Entry);
    const parent = [{ kind: 'session/start', seq: 0, at, id: 'p', model: 'm', depth: 0 }, { kind: 'subagent/start', seq: 1, at, callId: 'x', child: 'kid', depth: 1, mode: 'spawn' }] as unknown as Entry[];
    const p = new TraceProjector({ children: (id) => (id === 'kid' ? child : undefined) });
    for (const e of parent) p.add(e);
    // The parent's invoke_agent, then the child's and one execute_tool span a call.
    expect(p.spans()).toHaveLength(n + 2);
    expect(p.ended(true)).toHaveLength(n + 2);
  });
});
