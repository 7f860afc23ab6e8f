/**
 * A child's turn is never durable before its bracket in the parent (issue #26): on a store that keeps appends in
 * memory until a flush commits them (Postgres), a parent killed after its child's lines were committed and before
 * its own `subagent/start` was lost the bracket, and no repair of the parent found the child to close it (the
 * Postgres crash soak's orphaned, open child logs). Here a memory store that commits only at a flush, as Postgres
 * does, and checks at every commit that each child whose turn is committed has its `subagent/start` committed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMemorySessionStore } from '../../adapters/store/memory.js';
import type { Entry } from '../../log/entries.js';
import type { OpenedLog, SessionStore } from '../../ports/store.js';
import { createHarness, type Harness } from '../../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

/** A memory store whose lines are durable only once a flush returns; `broken`: commits that left a child's turn without its bracket. */
function committingStore() {
  const inner = createMemorySessionStore();
  const durable = new Map<string, Entry[]>();
  const broken: string[] = [];
  const check = () => {
    for (const [id, entries] of durable) {
      if (!entries.some((e) => e.kind === 'turn/start')) continue;
      const parent = [...durable.keys()].filter((p) => id.startsWith(`${p}.`)).sort((a, b) => b.length - a.length)[0];
      if (parent === undefined) continue;
      if (!durable.get(parent)!.some((e) => e.kind === 'subagent/start' && e.child === id)) broken.push(`${id}: its turn is committed, its subagent/start in ${parent} is not`);
    }
  };
  const store: SessionStore = {
    ...inner,
    open(id, o) {
      const log = inner.open(id, o);
      let pending: Entry[] = [];
      const commit = () => {
        durable.set(id, [...(durable.get(id) ?? []), ...pending]);
        pending = [];
        check();
      };
      const opened: OpenedLog = {
        location: log.location,
        ...(log.lock ? { lock: log.lock } : {}),
        append(entry, line) {
          log.append(entry, line);
          pending.push(entry);
        },
        async flush() {
          await log.flush();
          commit();
        },
        async close() {
          commit();
          await log.close();
        },
      };
      return opened;
    },
  };
  return { store, broken, durable };
}

describe('a delegation on a store that commits at a flush', () => {
  it("the parent's subagent/start is committed before any of the child's turn is", async () => {
    const s = committingStore();
    h = createHarness(
      async (req) => {
        const first = req.messages.find((m) => m.role === 'user');
        const child = first?.role === 'user' && first.content === 'count the files';
        const answered = req.messages.some((m) => m.role === 'tool');
        if (child) return answered ? { text: 'none' } : { toolCalls: [{ name: 'list_dir', arguments: {} }] };
        return answered ? { text: 'done' } : { toolCalls: [{ name: 'delegate', arguments: { task: 'count the files' } }] };
      },
      { settings: { maxDepth: 1 }, services: { store: s.store } },
    );
    const out = await h.session.run('go');
    expect(out.reason).toBe('completed');
    // The child ran and committed its turn: the check had something to check.
    const child = [...s.durable.keys()].find((id) => id.includes('.'));
    expect(child && s.durable.get(child)!.some((e) => e.kind === 'turn/end')).toBe(true);
    expect(s.broken).toEqual([]);
  });
});
