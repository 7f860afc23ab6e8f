import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../adapters/store/memory.js';
import { Recorder } from './recorder.js';
import { Entry, type Draft } from './entries.js';
import { isCanonicalEntry } from './parse.js';

const start = { kind: 'session/start', id: 's', cwd: '/w', model: 'm', depth: 0, parent: null, format: 1 } as const;

describe('a recorder over a store durable on append', () => {
  it('tells durable listeners at each append and reports nothing to flush', async () => {
    const r = new Recorder(createMemoryStore(), () => 0);
    const order: string[] = [];
    r.onEntry((e) => order.push(`live ${e.seq}`));
    r.onDurable((e) => order.push(`durable ${e.seq}`));
    r.append(start);
    r.append({ kind: 'turn/start', turn: 't1', input: 'x' });
    expect(order).toEqual(['live 1', 'durable 1', 'live 2', 'durable 2']);
    expect(r.isDurable).toBe(true);
    expect(r.durableUpTo).toBe(2);
    await r.flush();
    expect(order).toHaveLength(4);
  });

  it('is recognised by its flush: a wrapper that replaces flush must be flushed', async () => {
    const inner = createMemoryStore();
    const slow = Object.assign(Object.create(inner) as typeof inner, { flush: async () => new Promise<void>((r) => setTimeout(r, 1)) });
    const r = new Recorder(slow, () => 0);
    const durable: number[] = [];
    r.onDurable((e) => durable.push(e.seq));
    r.append(start);
    expect(r.isDurable).toBe(false);
    expect(durable).toEqual([]);
    await r.flush();
    expect(r.isDurable).toBe(true);
    expect(durable).toEqual([1]);
  });
});

describe('a recorder writing canonical lines without zod where it can (ADR 0033)', () => {
  const stampedAt = new Date(0).toISOString();

  it("writes a draft whose keys come in another order in the schema's order, the bytes zod's copy gives", () => {
    const store = createMemoryStore();
    const r = new Recorder(store, () => 0);
    r.append(start);
    const entry = r.append({ input: 'x', turn: 't1', kind: 'turn/start' } as unknown as Draft);
    const zods = Entry.parse({ seq: 2, at: stampedAt, input: 'x', turn: 't1', kind: 'turn/start' });
    expect(store.lines[1]).toBe(JSON.stringify(zods));
    expect(Object.keys(entry)).toEqual(Object.keys(zods));
  });

  it('keeps a draft already in canonical order as its entry, byte for byte what zod would have written', () => {
    const store = createMemoryStore();
    const r = new Recorder(store, () => 0);
    r.append(start);
    const turn = { kind: 'turn/start', turn: 't1', input: 'x' } as unknown as Draft;
    const entry = r.append(turn);
    expect(store.lines[1]).toBe(JSON.stringify(Entry.parse({ seq: 2, at: stampedAt, ...turn })));
    expect(isCanonicalEntry(entry)).toBe(true);
    // session/start's config may hold a budget's price table (a record, ADR 0047): zod writes that line, once a session.
    expect(isCanonicalEntry(r.entries[0]!)).toBe(false);
  });

  it('still rejects a bad draft by its schema (LOG_ENTRY_REJECTED) and records nothing', () => {
    const store = createMemoryStore();
    const r = new Recorder(store, () => 0);
    r.append(start);
    const bad = { kind: 'turn/start', turn: 't1', input: 42 } as unknown as Draft;
    expect(() => r.append(bad)).toThrow(expect.objectContaining({ code: 'LOG_ENTRY_REJECTED' }));
    expect(r.entries).toHaveLength(1);
    expect(store.lines).toHaveLength(1);
  });
});
