/**
 * What the Postgres store adds to the store contract (ADR 0025): its schema
 * is versioned and a newer one refused; a lease is renewed while its writer
 * runs and taken over once it expires; the epoch fences a writer that lost
 * it — its next flush fails `LEASE_LOST`, every later append too, and none
 * of it reaches the log; a session whose lease is lost runs no tool.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createScriptedProviderFromFunction } from '../model/scripted.js';
import { LOG_FORMAT } from '../../log/entries-session.js';
import type { Draft } from '../../log/entries.js';
import { LogNotDurableError, SessionLockedError } from '../../log/errors.js';
import { Recorder } from '../../log/recorder.js';
import { createHarness, steppingClock } from '../../test/helpers/harness.js';
import { describeWithPostgres, sqlRows } from '../../test/helpers/postgres.js';
import { createPostgresSessionStore } from './postgres.js';
import { StoreUnavailableError } from './postgres-pool.js';
import { SCHEMA_VERSION, StoreSchemaError } from './postgres-schema.js';

const start = (id: string): Draft => ({ kind: 'session/start', id, cwd: '/w', model: 'm', depth: 0, parent: null, format: LOG_FORMAT });
const turnStart = (k: number): Draft => ({ kind: 'turn/start', turn: `t${k}`, input: `turn ${k}` });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


describeWithPostgres('the Postgres store', (db) => {
  it('creates its tables on first use at its schema version, and refuses a newer schema by name', async () => {
    const url = await db.fresh();
    const store = createPostgresSessionStore({ url });
    (await store.claim('a')).release();
    expect(await sqlRows(url, 'SELECT max(version) AS version FROM bridle_schema')).toEqual([{ version: SCHEMA_VERSION }]);
    await sqlRows(url, 'INSERT INTO bridle_schema (version) VALUES ($1)', [SCHEMA_VERSION + 1]);
    // A new pool meets the schema afresh, as an older bridle started after an upgrade would.
    const older = createPostgresSessionStore({ url: `${url}&application_name=older` });
    const err = await older.claim('b').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreSchemaError);
    expect(err).toMatchObject({ code: 'STORE_SCHEMA_TOO_NEW', found: SCHEMA_VERSION + 1, supported: SCHEMA_VERSION });
    expect((err as Error).message).toMatch(/newer than this bridle knows/);
  });

  it('fences a writer whose lease expired and was taken over: its flush fails LEASE_LOST, later appends too, and none of it is in the log', async () => {
    // Two workers in one process: A stops renewing (a paused process), B comes after its lease expired.
    const a = createPostgresSessionStore({ url: db.url(), leaseMs: 300 }, { pid: 1001, renew: false });
    const b = createPostgresSessionStore({ url: db.url(), leaseMs: 5000 }, { pid: 1002 });
    const lockA = await a.claim('fenced');
    const logA = a.open('fenced', { lock: lockA });
    const ra = new Recorder(logA, steppingClock());
    ra.append(start('fenced'));
    await ra.flush();

    await expect(b.claim('fenced')).rejects.toThrow(SessionLockedError);
    await sleep(450);
    const lockB = await b.claim('fenced');
    expect(lockB.tookOver).toMatchObject({ pid: 1001 });
    const logB = b.open('fenced', { lock: lockB });
    const rb = new Recorder(logB, steppingClock(Date.UTC(2026, 0, 2)), (await b.tail('fenced'))!.map((l) => JSON.parse(l)));
    rb.append({ kind: 'session/takeover', ignorable: true, stale: lockB.tookOver!, by: { pid: 1002, host: lockB.holder.host } });
    await rb.flush();

    ra.append(turnStart(1));
    const failed = await ra.flush().catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(LogNotDurableError);
    expect(failed).toMatchObject({ sysCode: 'LEASE_LOST' });
    expect((failed as Error).message).toMatch(/lease on the session was lost \(epoch 1\)/);
    expect(() => ra.append(turnStart(2))).toThrow(/LEASE_LOST|lease on the session was lost/);
    await expect(ra.flush()).rejects.toThrow(/lease/);

    rb.append(turnStart(1));
    await logB.close();
    await logA.close().catch(() => undefined);
    const kinds = (await b.tail('fenced'))!.map((l) => JSON.parse(l) as { kind: string; at: string });
    expect(kinds.map((e) => e.kind)).toEqual(['session/start', 'session/takeover', 'turn/start']);
    // B's turn/start, not A's: A's entries were stamped on the first day.
    expect(kinds[2]!.at.startsWith('2026-01-02')).toBe(true);
    expect(await sqlRows(db.url(), 'SELECT epoch, owner FROM bridle_sessions WHERE id = $1', ['fenced'])).toEqual([{ epoch: '2', owner: null }]);
  });

  it('renews a lease while its writer runs, so nobody takes it over', async () => {
    const a = createPostgresSessionStore({ url: db.url(), leaseMs: 300 }, { pid: 2001 });
    const b = createPostgresSessionStore({ url: db.url(), leaseMs: 300 }, { pid: 2002 });
    const lock = await a.claim('renewed');
    await sleep(900);
    const refused = await b.claim('renewed').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SessionLockedError);
    expect((refused as Error).message).toMatch(/pid 2001 on .*; its lease \(epoch 1\) has not expired; lock: postgres(ql)?:\/\/.*#renewed$/);
    lock.release();
    await (lock as unknown as { released(): Promise<void> }).released();
    expect((await b.claim('renewed')).tookOver).toBeUndefined();
  });

  it('opened without a lease, claims one in the background: `ready` and the first flush wait for it', async () => {
    const store = createPostgresSessionStore({ url: db.url() }, { pid: 3001 });
    const log = store.open('lazy');
    const r = new Recorder(log, steppingClock());
    r.append(start('lazy'));
    expect((await log.ready!).holder.pid).toBe(3001);
    await r.flush();
    const second = createPostgresSessionStore({ url: db.url() }, { pid: 3002 }).open('lazy');
    await expect(second.ready!).rejects.toBeInstanceOf(SessionLockedError);
    second.append({ ...r.entries[0]!, seq: 2 } as never, 'x');
    await expect(second.flush()).rejects.toBeInstanceOf(SessionLockedError);
    await log.close();
    expect(await store.tail('lazy')).toHaveLength(1);
  });

  it('refuses a batch that does not follow the last committed seq', async () => {
    const store = createPostgresSessionStore({ url: db.url() });
    const r1 = new Recorder(store.open('twice'), steppingClock());
    r1.append(start('twice'));
    await r1.store.close();
    // A second writer that did not read the log first would start it again at seq 1.
    const r2 = new Recorder(store.open('twice'), steppingClock());
    r2.append(start('twice'));
    await expect(r2.flush()).rejects.toThrow(/ends at seq 1, but this writer's next entry is seq 1/);
    await r2.store.close().catch(() => undefined);
  });

  it('says in one named error when the database cannot be reached, and never shows a password', async () => {
    const nowhere = createPostgresSessionStore({ url: 'postgres://bridle:s3cret@127.0.0.1:1/none' });
    const err = await nowhere.claim('x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect(err).toMatchObject({ code: 'STORE_UNAVAILABLE', sysCode: 'ECONNREFUSED' });
    expect((err as Error).message).not.toContain('s3cret');
    expect(nowhere.open('x').location).toBe('postgres://bridle:***@127.0.0.1:1/none#x');
    expect(createPostgresSessionStore({ url: 'postgres://u@h/db?host=/run/pg&password=p&sslmode=disable' }).open('y').location).toBe('postgres://u@h/db?host=%2Frun%2Fpg&password=***&sslmode=disable#y');
  });

  it('runs no tool once the lease is lost: the dispatch cannot be saved, and the session stops', async () => {
    const a = createPostgresSessionStore({ url: db.url(), leaseMs: 300 }, { pid: 4001, renew: false });
    const model = createScriptedProviderFromFunction((_req, i) => (i === 0 ? { text: 'run it', toolCalls: [{ name: 'bash', arguments: { command: 'echo ran >> marker' } }] } : { text: 'done' }));
    const h = createHarness(model, { services: { store: a }, id: 'stopped' });
    try {
      await h.session.recorder.store.flush();
      await sleep(450);
      const b = createPostgresSessionStore({ url: db.url() }, { pid: 4002 });
      (await b.claim('stopped')).release();
      const out = await h.session.run('go').catch((e: unknown) => e);
      expect(existsSync(join(h.workspace, 'marker'))).toBe(false);
      expect(JSON.stringify(out)).toMatch(/LEASE_LOST|lease on the session was lost/);
      await expect(h.session.send('more')).rejects.toThrow(/takes no more input/);
      expect((await b.tail('stopped'))!.map((l) => JSON.parse(l).kind)).toEqual(['session/start']);
      await h.session.close().catch(() => undefined);
    } finally {
      h.cleanup();
    }
  });
  it('deletes a session and its child rows in one transaction under the lease: never while another worker holds it; a fenced writer then finds it gone', async () => {
    const a = createPostgresSessionStore({ url: db.url(), leaseMs: 300 }, { pid: 5001, renew: false });
    const b = createPostgresSessionStore({ url: db.url(), leaseMs: 5000 }, { pid: 5002 });
    const logA = a.open('gone', { lock: await a.claim('gone') });
    const ra = new Recorder(logA, steppingClock());
    ra.append(start('gone'));
    ra.append(turnStart(1));
    await ra.flush();
    await sqlRows(db.url(), `INSERT INTO bridle_inbox (session, text, forwarded) VALUES ($1, '', '{}')`, ['gone']);
    const rows = async () =>
      (await sqlRows<{ n: string }>(db.url(), `SELECT (SELECT count(*) FROM bridle_sessions WHERE id = $1) + (SELECT count(*) FROM bridle_entries WHERE session = $1) + (SELECT count(*) FROM bridle_inbox WHERE session = $1) AS n`, ['gone']))[0]!.n;

    const refused = await b.delete!('gone').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SessionLockedError);
    expect((refused as Error).message).toMatch(/pid 5001 on /);
    expect(await rows()).toBe('4');

    await sleep(450);
    expect(await b.delete!('gone')).toBe(true);
    expect(await rows()).toBe('0');
    expect(await b.tail('gone')).toBeUndefined();
    ra.append(turnStart(2));
    await expect(ra.flush()).rejects.toMatchObject({ sysCode: 'LEASE_LOST' });
    await logA.close().catch(() => undefined);
    // A delete of a session the store lacks takes no claim: no row is left for the id.
    expect(await b.delete!('gone')).toBe(false);
    expect(await rows()).toBe('0');
  });
});

