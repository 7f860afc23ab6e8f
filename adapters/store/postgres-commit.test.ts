/**
 * One transaction per round across sessions on Postgres (ADR 0073): the flushes of a pool's sessions asked for in
 * one tick are one commit; each session's batch is fenced inside it on its own, so a session whose lease was
 * taken over fails `LEASE_LOST` alone while the others commit; a statement the database refuses whole is tried
 * log by log, so only the log it cannot take fails.
 */
import { expect, it } from 'vitest';
import { LOG_FORMAT } from '../../log/entries-session.js';
import type { Draft } from '../../log/entries.js';
import { Recorder } from '../../log/recorder.js';
import { steppingClock } from '../../test/helpers/harness.js';
import { describeWithPostgres, sqlRows } from '../../test/helpers/postgres.js';
import { createPostgresSessionStore } from './postgres.js';
import { commitRoundsFor } from './postgres-commit.js';

const start = (id: string): Draft => ({ kind: 'session/start', id, cwd: '/w', model: 'm', depth: 0, parent: null, format: LOG_FORMAT });
const turnStart = (k: number): Draft => ({ kind: 'turn/start', turn: `t${k}`, input: `turn ${k}` });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seqsOf = async (url: string, id: string) => (await sqlRows<{ seq: string }>(url, 'SELECT seq FROM bridle_entries WHERE session = $1 ORDER BY seq', [id])).map((r) => Number(r.seq));

describeWithPostgres('rounds of Postgres commits across sessions (ADR 0073)', (db) => {
  it("eight sessions' flushes of one tick are one commit, every line of each in it", async () => {
    const url = await db.fresh();
    const store = createPostgresSessionStore({ url });
    const recs = await Promise.all(
      Array.from({ length: 8 }, async (_, k) => {
        const lock = await store.claim(`g${k}`);
        return new Recorder(store.open(`g${k}`, { lock }), steppingClock());
      }),
    );
    const rounds = commitRoundsFor(await store.pool());
    const before = { ...rounds.stats };
    for (const [k, r] of recs.entries()) (r.append(start(`g${k}`)), r.append(turnStart(1)));
    await Promise.all(recs.flatMap((r) => [r.flush(), r.flush()]));
    expect({ rounds: rounds.stats.rounds - before.rounds, members: rounds.stats.members - before.members }).toEqual({ rounds: 1, members: 8 });
    for (let k = 0; k < 8; k++) expect(await seqsOf(url, `g${k}`)).toEqual([1, 2]);
    expect(await sqlRows(url, "SELECT count(*)::int AS n FROM bridle_sessions WHERE last_seq = 2 AND header->>'id' LIKE 'g%'")).toEqual([{ n: 8 }]);
    await Promise.all(recs.map((r) => r.store.close()));
  });

  it("keeps every line of a shared commit byte for byte and in order: quotes, backslashes, braces, commas, escapes, non-ASCII (ADR 0082)", async () => {
    const url = await db.fresh();
    const store = createPostgresSessionStore({ url });
    const ids = ['enc-a', 'enc-b'];
    const recs = await Promise.all(ids.map(async (id) => new Recorder(store.open(id, { lock: await store.claim(id) }), steppingClock())));
    const odd = (k: number) => `"q" \\ \\" {a,b} ("x") NULL , ; \u0000 \ud800 \n é ☃ 🙂 ${k}`;
    const rounds = commitRoundsFor(await store.pool());
    const before = rounds.stats.rounds;
    for (const [j, r] of recs.entries()) {
      r.append(start(ids[j]!));
      for (let k = 0; k < 1500; k++) r.append({ kind: 'turn/start', turn: `t${k}`, input: odd(k) });
    }
    await Promise.all(recs.map((r) => r.flush()));
    expect(rounds.stats.rounds - before).toBe(1);
    for (const [j, r] of recs.entries()) {
      const back = await store.tail(ids[j]!);
      expect(back).toEqual(r.entries.map((e) => JSON.stringify(e)));
    }
    await Promise.all(recs.map((r) => r.store.close()));
  });

  it("a session whose lease was taken over fails LEASE_LOST inside the shared commit; the other session's batch commits", async () => {
    const url = await db.fresh();
    // Worker A (not renewing: a paused process) holds `lost`, a third worker in this process `kept`: one pool, one round. B takes `lost` over once A's lease expired.
    const a = createPostgresSessionStore({ url, leaseMs: 300 }, { pid: 4001, renew: false });
    const b = createPostgresSessionStore({ url, leaseMs: 5000 }, { pid: 4002 });
    const lostLog = a.open('lost', { lock: await a.claim('lost') });
    const kept = createPostgresSessionStore({ url, leaseMs: 60_000 }, { pid: 4003 });
    const keptOpen = kept.open('kept', { lock: await kept.claim('kept') });
    const rl = new Recorder(lostLog, steppingClock());
    const rk = new Recorder(keptOpen, steppingClock());
    rl.append(start('lost'));
    rk.append(start('kept'));
    await Promise.all([rl.flush(), rk.flush()]);
    await sleep(450);
    const lockB = await b.claim('lost');
    const rounds = commitRoundsFor(await a.pool());
    const before = rounds.stats.rounds;
    rl.append(turnStart(1));
    rk.append(turnStart(1));
    const outs = await Promise.allSettled([rl.flush(), rk.flush()]);
    expect(rounds.stats.rounds - before).toBe(1);
    expect(outs[0]).toMatchObject({ status: 'rejected', reason: { code: 'LOG_NOT_DURABLE', sysCode: 'LEASE_LOST' } });
    expect(outs[1].status).toBe('fulfilled');
    expect(await seqsOf(url, 'lost')).toEqual([1]);
    expect(await seqsOf(url, 'kept')).toEqual([1, 2]);
    lockB.release();
    await rk.store.close();
    await rl.store.close().catch(() => undefined);
  });

  it('a statement the database refuses whole is tried log by log: only the log it cannot take fails', async () => {
    const url = await db.fresh();
    const store = createPostgresSessionStore({ url });
    const good = new Recorder(store.open('good', { lock: await store.claim('good') }), steppingClock());
    const badLog = store.open('bad', { lock: await store.claim('bad') });
    good.append(start('good'));
    const header = JSON.stringify({ seq: 1, at: '2026-01-01T00:00:00.000Z', ...start('bad') });
    badLog.append(JSON.parse(header), header);
    // A raw NUL in a line (no recorder writes one): the lines travel as one JSON array, whose `\u0000` the database
    // cannot turn into text (22P05; a text[] parameter's NUL was 22021), and with it it refuses the whole statement.
    badLog.append({ seq: 2, at: '2026-01-01T00:00:00.000Z', kind: 'turn/start', turn: 't1', input: 'x' } as never, '{"seq":2,"kind":"turn/start","input":"\u0000"}');
    const outs = await Promise.allSettled([good.flush(), badLog.flush()]);
    expect(outs[0].status).toBe('fulfilled');
    expect(outs[1]).toMatchObject({ status: 'rejected', reason: { code: '22P05' } });
    expect(await seqsOf(url, 'good')).toEqual([1]);
    expect(await seqsOf(url, 'bad')).toEqual([]);
    await good.store.close();
    await badLog.close().catch(() => undefined);
  });
});
