import { readFileSync } from 'node:fs';
import * as semconv from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, it } from 'vitest';
import type { Entry } from './entries.js';
import { parseLog } from './parse.js';
import { traceIdOf, traceOf, type TraceSpan } from './trace.js';

const golden = (name: string): Entry[] => parseLog(readFileSync(new URL(`../test/golden/${name}.jsonl`, import.meta.url), 'utf8')).entries;
const byName = (spans: TraceSpan[], prefix: string) => spans.filter((s) => s.name.startsWith(prefix));
/** Every `gen_ai.*` attribute name the official incubating conventions package knows. */
const KNOWN = new Set(Object.entries(semconv).filter(([k]) => k.startsWith('ATTR_GEN_AI_')).map(([, v]) => v as string));

describe('a trace is a projection of the log', () => {
  it('the flaky-checkout golden log: one invoke_agent, a turn, a chat span per step, an execute_tool span per call, parented so', () => {
    const entries = golden('flaky-checkout');
    const spans = traceOf(entries);
    const [root] = spans;
    expect(root).toMatchObject({ name: 'invoke_agent bridle', kind: 'internal', traceId: traceIdOf(entries[0]!.kind === 'session/start' ? entries[0]!.id : '') });
    expect(root!.parentSpanId).toBeUndefined();
    const turns = byName(spans, 'turn ');
    const chats = byName(spans, 'chat ');
    const tools = byName(spans, 'execute_tool ');
    expect(turns.length).toBe(entries.filter((e) => e.kind === 'turn/start').length);
    expect(chats.length).toBe(entries.filter((e) => e.kind === 'step/start').length);
    expect(tools.length).toBe(entries.filter((e) => e.kind === 'tool/call').length);
    for (const t of turns) expect(t.parentSpanId).toBe(root!.spanId);
    const turnIds = new Set(turns.map((t) => t.spanId));
    for (const s of [...chats, ...tools]) expect(turnIds.has(s.parentSpanId!)).toBe(true);
    for (const c of chats) {
      expect(c.kind).toBe('client');
      expect(c.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': expect.any(String), 'gen_ai.provider.name': 'bridle.scripted' });
    }
    for (const t of tools) {
      expect(t.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': t.name.slice('execute_tool '.length), 'gen_ai.tool.call.id': expect.any(String), 'bridle.tool.outcome': 'ok' });
      expect(t.status.code).toBe('ok');
      expect(BigInt(t.endTimeUnixNano) >= BigInt(t.startTimeUnixNano)).toBe(true);
      expect(t.events.map((e) => e.name)).toContain('bridle.tool.dispatched');
    }
    const ids = spans.map((s) => s.spanId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('every gen_ai.* attribute it writes is a name of the official conventions package', () => {
    for (const name of ['flaky-checkout', 'approvals', 'compaction', 'crash-resume', 'ctrl-c']) {
      for (const s of traceOf(golden(name), { content: true })) {
        for (const k of Object.keys(s.attributes).filter((k) => k.startsWith('gen_ai.'))) expect(KNOWN.has(k), `${name}: ${k}`).toBe(true);
      }
    }
  });

  it('an answer that logged its time to first chunk gives its chat span gen_ai.response.time_to_first_chunk, in seconds; one that did not, none (ADR 0079)', () => {
    expect(semconv.ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK).toBe('gen_ai.response.time_to_first_chunk');
    const plain = golden('flaky-checkout');
    const first = plain.findIndex((e) => e.kind === 'assistant/message');
    const timed = plain.map((e, i) => (i === first ? ({ ...e, firstChunkMs: 1234 } as Entry) : e));
    const chats = byName(traceOf(timed), 'chat ');
    expect(chats[0]!.attributes['gen_ai.response.time_to_first_chunk']).toBe(1.234);
    expect(chats.slice(1).some((s) => 'gen_ai.response.time_to_first_chunk' in s.attributes)).toBe(false);
    expect(byName(traceOf(plain), 'chat ').some((s) => 'gen_ai.response.time_to_first_chunk' in s.attributes)).toBe(false);
  });

  it('the same log always gives the same trace', () => {
    const a = JSON.stringify(traceOf(golden('approvals')));
    const b = JSON.stringify(traceOf(golden('approvals')));
    expect(a).toBe(b);
    expect(JSON.stringify(traceOf(golden('ctrl-c')))).not.toBe(a);
  });

  it('approvals are events of their call, asked then decided, with the answer and who gave it', () => {
    const spans = traceOf(golden('approvals'));
    const asked = byName(spans, 'execute_tool ').filter((s) => s.events.some((e) => e.name === 'bridle.approval.asked'));
    expect(asked.length).toBeGreaterThan(0);
    for (const s of asked) {
      const names = s.events.map((e) => e.name);
      expect(names.indexOf('bridle.approval.asked')).toBeLessThan(names.indexOf('bridle.approval.decided'));
      expect(s.events.find((e) => e.name === 'bridle.approval.decided')!.attributes).toMatchObject({ 'bridle.approval.outcome': expect.any(String), 'bridle.approval.by': expect.any(String) });
    }
  });

  it('a denied call is an error span with its outcome; a cancelled turn says so', () => {
    const denied = byName(traceOf(golden('approvals')), 'execute_tool ').filter((s) => s.attributes['bridle.tool.outcome'] !== 'ok');
    for (const s of denied) expect(s.status.code).toBe('error');
    const turns = byName(traceOf(golden('ctrl-c')), 'turn ');
    expect(turns.some((t) => t.attributes['bridle.turn.reason'] === 'aborted')).toBe(true);
  });

  it('a crash repaired: the repair is an event, the call whose outcome is unknown says uncertain', () => {
    const spans = traceOf(golden('crash-resume'));
    expect(spans.flatMap((s) => s.events).some((e) => e.name === 'bridle.repair')).toBe(true);
  });

  it('compaction is a span of its own', () => {
    const spans = traceOf(golden('compaction'));
    expect(byName(spans, 'compaction').length).toBeGreaterThan(0);
  });

  it('content only on opt-in: without it no message, argument or result text is in any attribute', () => {
    const entries = golden('flaky-checkout');
    const plain = JSON.stringify(traceOf(entries));
    for (const k of ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result', 'gen_ai.system_instructions']) expect(plain).not.toContain(k);
    const withContent = traceOf(entries, { content: true });
    const chat = byName(withContent, 'chat ')[1]!;
    const input = JSON.parse(chat.attributes['gen_ai.input.messages'] as string) as { role: string; parts: { type: string }[] }[];
    expect(input[0]).toMatchObject({ role: 'user', parts: [{ type: 'text' }] });
    expect(input.some((m) => m.role === 'tool' && m.parts[0]!.type === 'tool_call_response')).toBe(true);
    expect(JSON.parse(chat.attributes['gen_ai.output.messages'] as string)[0]).toMatchObject({ role: 'assistant', finish_reason: expect.any(String) });
  });

  it('a subagent is an invoke_agent span of the same trace under the call that started it, linked to it', () => {
    const parent = golden('flaky-checkout');
    const call = parent.find((e) => e.kind === 'tool/call')!;
    const childId = 'child-1';
    const withSub: Entry[] = [...parent];
    const at = call.at;
    const i = parent.indexOf(call) + 1;
    withSub.splice(i, 0, { seq: 0, at, kind: 'subagent/start', callId: (call as { callId: string }).callId, child: childId, depth: 1, mode: 'spawn' } as Entry);
    const child = golden('approvals').map((e) => (e.kind === 'session/start' ? { ...e, id: childId, depth: 1, parent: 'p' } : e));
    const spans = traceOf(withSub, { children: (id) => (id === childId ? child : undefined) });
    const roots = spans.filter((s) => s.name === 'invoke_agent bridle');
    expect(roots.length).toBe(2);
    const toolSpan = spans.find((s) => s.name.startsWith('execute_tool ') && s.attributes['bridle.call.id'] === (call as { callId: string }).callId)!;
    expect(roots[1]!.parentSpanId).toBe(toolSpan.spanId);
    expect(roots[1]!.traceId).toBe(roots[0]!.traceId);
    expect(roots[1]!.links[0]).toMatchObject({ spanId: toolSpan.spanId });
  });
});
