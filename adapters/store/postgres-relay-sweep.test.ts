/**
 * The store's side of the lease sweep (ADR 0034), on a real Postgres: which
 * sessions need taking over — a lease held and expired, and work left (a turn
 * open, an input no turn or message took, an inbox row nobody settled) — and
 * which do not: at rest, released, live, a steer a message took; one the
 * worker could not open is left out until its log grows.
 */
import { expect, it, vi } from 'vitest';
import { createPostgresSessionStore } from './postgres.js';
import { describeWithPostgres, sqlRows } from '../../test/helpers/postgres.js';
import { sweepSource } from './postgres-relay.js';


type Lease = 'expired' | 'released' | 'live';

/** A session's row and its log as lines, the canonical shape's first keys only (all the sweep reads). */
async function put(url: string, id: string, lease: Lease, entries: object[]): Promise<void> {
  const lines = entries.map((e, i) => JSON.stringify({ seq: i + 1, at: '2026-12-01T00:00:00.000Z', ...e }));
  const owner = lease === 'released' ? null : JSON.stringify({ pid: 4242, host: 'gone', since: '2026-12-01T00:00:00.000Z' });
  const expires = lease === 'live' ? "now() + interval '1 hour'" : lease === 'expired' ? "now() - interval '1 second'" : 'NULL';
  await sqlRows(url, `INSERT INTO bridle_sessions (id, header, owner, epoch, lease_expires, last_seq) VALUES ($1, $2, $3, 1, ${expires}, $4)`, [id, JSON.stringify({ cwd: '/w', model: 'm' }), owner, lines.length]);
  for (const [i, line] of lines.entries()) await sqlRows(url, 'INSERT INTO bridle_entries (session, seq, line) VALUES ($1, $2, $3)', [id, i + 1, line]);
}

const start = { kind: 'session/start' };
const input = (mode = 'followup') => ({ kind: 'session/input', mode, text: 'x' });
const turn = (from: number) => ({ kind: 'turn/start', from });
const end = { kind: 'turn/end', reason: 'completed' };

describeWithPostgres('the lease sweep\'s candidates', (db) => {
  it('the sweep asks only for sessions whose expired lease left work: a turn open, queued input, an unsettled inbox row', async () => {
    const url = await db.fresh();
    const store = createPostgresSessionStore({ url });
    await store.pool();
    await put(url, 'open-turn', 'expired', [start, input(), turn(2)]);
    await put(url, 'queued', 'expired', [start, input(), turn(2), end, input()]);
    await put(url, 'inboxed', 'expired', [start, input(), turn(2), end]);
    await sqlRows(url, "INSERT INTO bridle_inbox (session, kind, mode, text) VALUES ('inboxed', 'input', 'followup', 'forwarded')");
    await put(url, 'at-rest', 'expired', [start, input(), turn(2), end]);
    await put(url, 'steered', 'expired', [start, input(), turn(2), end, input('inject'), { kind: 'user/message', from: 5 }]);
    await put(url, 'ended', 'expired', [start, { kind: 'session/end' }]);
    await put(url, 'released', 'released', [start, input(), turn(2), end]);
    await put(url, 'live', 'live', [start, input(), turn(2)]);
    const sweep = sweepSource(store);
    expect((await sweep.candidates(10)).sort()).toEqual(['inboxed', 'open-turn', 'queued']);
    expect(await sweep.candidates(1)).toHaveLength(1);
    // One this worker could not open is not asked again while its log stays as it was; once it grows, it is.
    sweep.seen('open-turn', 'refused');
    expect((await sweep.candidates(10)).sort()).toEqual(['inboxed', 'queued']);
    await sqlRows(url, "INSERT INTO bridle_entries (session, seq, line) VALUES ('open-turn', 4, '{\"seq\":4,\"at\":\"x\",\"kind\":\"session/input\"}')");
    await sqlRows(url, "UPDATE bridle_sessions SET last_seq = 4 WHERE id = 'open-turn'");
    expect((await sweep.candidates(10)).sort()).toEqual(['inboxed', 'open-turn', 'queued']);
  });

  it('a session the sweep could not open is not asked for again while its log stays as it was', async () => {
    const url = await db.fresh();
    const store = createPostgresSessionStore({ url });
    await store.pool();
    await put(url, 'ralph-ish', 'expired', [start, input(), turn(2)]);
    const sweep = sweepSource(store);
    expect(await sweep.candidates(10)).toEqual(['ralph-ish']);
    sweep.seen('ralph-ish', 'refused');
    vi.useFakeTimers({ now: Date.now() + 10 * 60_000, toFake: ['Date'] });
    try {
      expect(await sweep.candidates(10)).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
    // Failed otherwise (the store out of reach): asked again a minute later.
    await put(url, 'unreachable', 'expired', [start, input(), turn(2)]);
    expect(await sweep.candidates(10)).toEqual(['unreachable']);
    sweep.seen('unreachable', 'failed');
    expect(await sweep.candidates(10)).toEqual([]);
    vi.useFakeTimers({ now: Date.now() + 61_000, toFake: ['Date'] });
    try {
      expect(await sweep.candidates(10)).toEqual(['unreachable']);
    } finally {
      vi.useRealTimers();
    }
    // Out of the way: another worker holds it now.
    await sqlRows(url, "UPDATE bridle_sessions SET lease_expires = now() + interval '1 hour' WHERE id = 'unreachable'");
    // Lost to another worker: nothing remembered, asked again if it is still there.
    await put(url, 'lost', 'expired', [start, input(), turn(2)]);
    expect(await sweep.candidates(10)).toEqual(['lost']);
    sweep.seen('lost', 'lost');
    expect(await sweep.candidates(10)).toEqual(['lost']);
  });

  it('a lease released to nobody while its session still has work (a turn open, queued input, an unsettled inbox row) is still a sweep candidate; released at rest it is not', async () => {
    // A worker that took the session and could not run it, or one that stopped mid-turn, released it with owner NULL:
    // no sweep looked at it again, and its open turn and pending question were stranded (issue 20 item 15).
    const url = await db.fresh();
    const store = createPostgresSessionStore({ url });
    await store.pool();
    await put(url, 'open-turn', 'released', [start, input(), turn(2)]);
    await put(url, 'queued', 'released', [start, input(), turn(2), end, input()]);
    await put(url, 'inboxed', 'released', [start, input(), turn(2), end]);
    await sqlRows(url, "INSERT INTO bridle_inbox (session, kind, mode, text) VALUES ('inboxed', 'input', 'followup', 'forwarded')");
    await put(url, 'at-rest', 'released', [start, input(), turn(2), end]);
    await put(url, 'ended', 'released', [start, input(), turn(2), end, { kind: 'session/end' }, input()]);
    expect((await sweepSource(store).candidates(10)).sort()).toEqual(['inboxed', 'open-turn', 'queued']);
  });
});
