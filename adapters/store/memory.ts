/** The memory store: lines kept in an array; durable as soon as written. For tests and benchmarks. */
import { z } from 'zod';
import { STORE } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import type { LogStore, SessionStore } from '../../ports/store.js';
import type { Entry } from '../../log/entries.js';
import { nothingToFlush } from '../../log/recorder.js';

export interface MemoryStore extends LogStore {
  readonly lines: string[];
  /** The log as a JSONL file would hold it. */
  text(): string;
}

export function createMemoryStore(location = 'memory:'): MemoryStore {
  const lines: string[] = [];
  return {
    location,
    lines,
    append(_entry: Entry, line: string) {
      lines.push(line);
    },
    flush: nothingToFlush,
    async close() {},
    text: () => (lines.length ? lines.join('\n') + '\n' : ''),
  };
}

/** A store of memory logs by session id; `get` reads one back (tests, benchmarks). */
export interface MemorySessionStore extends SessionStore {
  get(id: string): MemoryStore | undefined;
}

export function createMemorySessionStore(): MemorySessionStore {
  const logs = new Map<string, MemoryStore>();
  return {
    id: 'memory',
    open(id) {
      let s = logs.get(id);
      if (!s) logs.set(id, (s = createMemoryStore(`memory:${id}`)));
      return s;
    },
    get: (id) => logs.get(id),
    tail: async (id, fromSeq = 1) => logs.get(id)?.lines.slice(Math.max(0, fromSeq - 1)),
  };
}

/** The `memory` provider of the store seam: logs kept in memory, durable as soon as written. */
export const memoryStore = defineProvider({
  seam: STORE,
  name: 'memory',
  config: z.strictObject({}),
  create: () => createMemorySessionStore(),
});
