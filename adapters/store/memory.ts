/** The memory store: lines kept in an array; durable as soon as written. For tests and benchmarks. */
import type { LogStore } from '../../ports/store.js';
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
