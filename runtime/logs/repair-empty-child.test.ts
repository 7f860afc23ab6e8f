/**
 * A child its parent's log brackets, whose own log holds no line (issue #26): on Postgres a child's session is
 * claimed before its first commit, and the parent's `subagent/start` is committed before the child's turn runs,
 * so a kill between the two leaves exactly this. Nothing of the child ran that a repair could close: it is
 * reported as missing, as a child with no log is, and the parent's repair goes on (it was refused as corrupt).
 * A top-level session left so (claimed, killed before its first commit) is no session to every reader.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createMemorySessionStore } from '../../adapters/store/memory.js';
import { createPostgresSessionStore } from '../../adapters/store/postgres.js';
import { closePostgresPools } from '../../adapters/store/postgres-pool.js';
import { describeWithPostgres } from '../../test/helpers/postgres.js';
import type { Draft } from '../../log/entries.js';
import type { SessionStore } from '../../ports/store.js';
import { Recorder } from '../../log/recorder.js';
import { LogBuilder } from '../../test/helpers/log-builder.js';
import { claimToGoOn } from './open.js';
import { readSessionLog } from './read.js';
import { repairSession } from './repair.js';

const clock = () => Date.UTC(2026, 0, 2);

/** A session `s` whose store holds its row and no line: repair finds nothing, a read gets none, going on is refused. */
async function expectNoSession(store: SessionStore, message: string | RegExp): Promise<void> {
  expect((await store.read('s'))?.lines).toEqual([]);
  const lock = await store.claim('s');
  try {
    expect(await repairSession(store, 's', lock, clock)).toBeUndefined();
  } finally {
    // The claim below comes right after: the store orders it after the release (the contract's case).
    lock.release();
  }
  expect(await readSessionLog(store, 's')).toBeUndefined();
  await expect(claimToGoOn(store, 's')).rejects.toMatchObject({ code: 'NO_SESSION', message: typeof message === 'string' ? message : expect.stringMatching(message) });
}

describe('a log that never saved a line', () => {
  it('the child is missing (nothing to repair), not refused as corrupt; the parent is repaired', async () => {
    const child = 's.t1.s1.c1';
    const b = new LogBuilder().startTurn().startStep().answer('', [{ name: 'delegate', args: { task: 'x' } }]).dispatch(1).add({ kind: 'subagent/start', callId: 't1.s1.c1', child, depth: 1, mode: 'spawn' });
    const store = createMemorySessionStore();
    const log = store.open('s');
    const rec = new Recorder(log, clock);
    for (const { seq: _s, at: _a, ...d } of b.entries) rec.append(d as Draft);
    await log.close();
    // The child's log: opened (its claim taken), never written.
    await store.open(child).close();
    const lock = await store.claim('s');
    try {
      const r = await repairSession(store, 's', lock, clock);
      expect(r?.ok).toBe(true);
      expect(r?.ok && r.children).toEqual([{ child, location: `memory:${child}`, outcome: { kind: 'missing' } }]);
      expect(r?.ok && r.appended.map((e) => e.kind)).toContain('subagent/end');
    } finally {
      lock.release();
    }
  });

  it('a top-level session claimed and never committed is no session: not corrupt to repair, read or go on with', async () => {
    const store = createMemorySessionStore();
    await store.open('s').close();
    await expectNoSession(store, 'no session log at memory:s');
  });
});

describeWithPostgres('a Postgres session claimed and killed before its first commit', (db) => {
  afterAll(() => closePostgresPools());
  it('is no session to repair, read or go on with: the store keeps its row, and no reader calls it corrupt', async () => {
    const store = createPostgresSessionStore({ url: await db.fresh() });
    // The claim writes the session's row; a process killed now has committed no line of it.
    (await store.claim('s')).release();
    await expectNoSession(store, /^no session log at \S+#s$/);
  });
});
