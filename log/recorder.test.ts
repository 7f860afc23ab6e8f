import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../adapters/store/memory.js';
import { Recorder } from './recorder.js';

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
