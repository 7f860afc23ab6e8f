/** The memory store: lines kept in an array; durable as soon as written. For tests and benchmarks. */
import { z } from 'zod';
import { STORE } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import { type OpenedLog, type SessionStore, type StoredSession, titleOf, type WriterLock } from '../../ports/store.js';
import type { LockHolder } from '../../log/errors.js';
import type { LogStore } from '../../log/store.js';
import { SessionLockedError } from '../../log/errors.js';
import { markerIn } from '../../log/markers.js';
import { listedExtras } from './listed.js';
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

/** The sessions a writer holds now: one writer per session, as in any store (docs/design.md §3). */
function memoryLocks(): { claim(id: string): WriterLock; held: ReadonlyMap<string, WriterLock> } {
  const held = new Map<string, WriterLock>();
  const holder: LockHolder = { pid: process.pid, host: 'memory', since: new Date(0).toISOString() };
  const claim = (id: string): WriterLock => {
    const other = held.get(id);
    if (other) throw new SessionLockedError(other.holder, `memory:${id}`);
    const lock: WriterLock = {
      location: `memory:${id}`,
      holder,
      release: () => {
        if (held.get(id) === lock) held.delete(id);
      },
    };
    held.set(id, lock);
    return lock;
  };
  return { claim, held };
}

/** A log's first line when it is a `session/start`: a log without one is not listed. */
function headerOf(log: MemoryStore | undefined): Record<string, unknown> | undefined {
  try {
    const h: unknown = JSON.parse(log?.lines[0] ?? '');
    return h !== null && typeof h === 'object' && (h as { kind?: unknown }).kind === 'session/start' ? (h as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A writer's view of a log: a claim taken here goes with the log's close, as the JSONL lock and the Postgres lease do. */
function openedLog(log: MemoryStore, lock: WriterLock, repair: boolean | undefined): OpenedLog {
  return {
    location: log.location,
    lock,
    append: (e, line) => log.append(e, line),
    flush: nothingToFlush,
    async close() {
      // A repair's log leaves the claim to the session that goes on under it.
      if (!repair) lock.release();
    },
  };
}

function listedSession(id: string, lines: string[], h: Record<string, unknown>, lock: WriterLock | undefined): StoredSession {
  const marker = markerIn(lines);
  return { id, lastSeq: lines.length, cwd: String(h.cwd ?? ''), model: String(h.model ?? ''), ...(lock ? { owner: lock.holder } : {}), ...(marker ? { marker } : {}), ...listedExtras(lines) };
}

export function createMemorySessionStore(): MemorySessionStore {
  const logs = new Map<string, MemoryStore>();
  const { claim, held } = memoryLocks();
  return {
    id: 'memory',
    location: 'memory:',
    locate: (id) => `memory:${id}`,
    open(id, o = {}) {
      let s = logs.get(id);
      if (!s) logs.set(id, (s = createMemoryStore(`memory:${id}`)));
      return openedLog(s, o.lock ?? claim(id), o.repair);
    },
    claim: async (id) => claim(id),
    get: (id) => logs.get(id),
    tail: async (id, fromSeq = 1) => logs.get(id)?.lines.slice(Math.max(0, fromSeq - 1)),
    read: async (id) => {
      const s = logs.get(id);
      return s ? { location: s.location, lines: s.lines.slice() } : undefined;
    },
    list: async () => ({
      sessions: [...logs.keys()].sort().flatMap((id) => {
        const h = headerOf(logs.get(id));
        return h ? [listedSession(id, logs.get(id)!.lines, h, held.get(id))] : [];
      }),
      problems: [],
    }),
    delete: async (id) => {
      if (!logs.has(id)) return false;
      // The claim first: a log another writer holds is never removed.
      const lock = claim(id);
      logs.delete(id);
      lock.release();
      return true;
    },
    forks: async (id) =>
      [...logs.keys()]
        .flatMap((k) => {
          const of = headerOf(logs.get(k))?.forkOf as { session?: unknown; seq?: unknown } | undefined;
          return of?.session === id && typeof of.seq === 'number' ? [{ id: k, seq: of.seq, location: `memory:${k}` }] : [];
        })
        .sort((a, b) => a.seq - b.seq || a.id.localeCompare(b.id)),
  };
}

/** The `memory` provider of the store seam: logs kept in memory, durable as soon as written. */
export const memoryStore = defineProvider({
  seam: STORE,
  name: 'memory',
  config: z.strictObject({}),
  create: () => createMemorySessionStore(),
});
