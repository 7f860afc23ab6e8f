/**
 * A child's turn is never durable before its bracket in the parent (issue #26): on a store that keeps appends in
 * memory until a flush commits them (Postgres), a parent killed after its child's lines were committed and before
 * its own `subagent/start` was lost the bracket, and no repair of the parent found the child to close it (the
 * Postgres crash soak's orphaned, open child logs). Here a memory store that commits only at a flush, as Postgres
 * does, and checks at every commit that each child whose turn is committed has its `subagent/start` committed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { committingStore } from '../../test/helpers/committing-store.js';
import { createHarness, type Harness } from '../../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

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
