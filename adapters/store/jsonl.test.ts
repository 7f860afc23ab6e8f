import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLog } from '../../log/parse.js';
import { Recorder } from '../../log/recorder.js';
import { createJsonlStore } from './jsonl.js';
import { createMemoryStore } from './memory.js';

describe('the JSONL store behind a recorder', () => {
  it('writes canonical lines in seq order that read back identically', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'bridle-jsonl-')), 'sessions', 's.jsonl');
    let t = Date.UTC(2026, 0, 1);
    const r = new Recorder(createJsonlStore(path), () => t++);
    r.append({ kind: 'session/start', id: 's', cwd: '/w', model: 'm', depth: 0, parent: null, format: 1 });
    r.append({ kind: 'turn/start', turn: 't1', input: 'hé 🙂' });
    await r.store.close();
    const text = readFileSync(path, 'utf8');
    const { entries } = parseLog(text);
    expect(entries.map((e) => e.seq)).toEqual([1, 2]);
    expect(entries.map((e) => JSON.stringify(e)).join('\n') + '\n').toBe(text);
    expect(entries[1]!.at).toBe('2026-01-01T00:00:00.001Z');
  });

  it('refuses a draft that fails its schema, and writes nothing for it', () => {
    const store = createMemoryStore();
    const r = new Recorder(store, () => 0);
    expect(() => r.append({ kind: 'turn/start', turn: 'x1', input: '' })).toThrow();
    expect(store.lines).toEqual([]);
  });

  it('tells durable listeners only after a flush, once each, in order', async () => {
    // A store with a flush of its own to wait for (the memory store's appends are durable at once: log/recorder.test.ts).
    const r = new Recorder({ ...createMemoryStore(), flush: async () => {} }, () => 0);
    const live: number[] = [];
    const durable: number[] = [];
    r.onEntry((e) => live.push(e.seq));
    r.onDurable((e) => durable.push(e.seq));
    r.append({ kind: 'session/start', id: 's', cwd: '/w', model: 'm', depth: 0, parent: null, format: 1 });
    r.append({ kind: 'turn/start', turn: 't1', input: 'x' });
    expect(live).toEqual([1, 2]);
    expect(durable).toEqual([]);
    await r.flush();
    await r.flush();
    expect(durable).toEqual([1, 2]);
  });
});
