/**
 * The owner's inbox pump (ADR 0030): input other workers forwarded to a
 * session is logged by the session's owner once each, in the inbox's order —
 * also when an earlier owner died between taking a row and writing its seq
 * back: a row whose input is in the log already is settled from the log, a
 * row whose input is not is delivered again. A forwarding worker's wait ends
 * with the seq the owner logged. ADR 0032: an approval answer, a cancel or a
 * compaction forwarded by another worker is applied as a local client's
 * would be and settled with the seq of the entry it logged (0: none), or with
 * the owner's refusal.
 */
import { expect, it } from 'vitest';
import { createScriptedProviderFromFunction } from '../model/scripted.js';
import { createPostgresSessionStore } from './postgres.js';
import { closeBuses, forward, forwardInput, openInbox } from './postgres-workers.js';
import { MIGRATIONS, SCHEMA_VERSION } from './postgres-schema.js';
import { ApprovalDesk } from '../../server/approvals.js';
import type { Entry } from '../../log/entries.js';
import type { OpenedLog } from '../../ports/store.js';
import { createHarness } from '../../test/helpers/harness.js';
import { describeWithPostgres, sqlRows } from '../../test/helpers/postgres.js';
import { relaySource, startInboxPump } from './postgres-relay.js';
import { ownedSession } from '../../server/owned-session.js';
import type { HostedSession } from '../../server/hosted-session.js';

/** The owner's side as the server gives it to the relay: a hosted session's answers at its desk. */
const owned = (bridle: unknown, desk: unknown) => ownedSession({ bridle, desk, tapDeltas: () => () => undefined } as unknown as HostedSession);


describeWithPostgres('the inbox pump', (db) => {
  it('forwarded input is logged once each by the owner, in order, across an owner that died between taking a row and settling it', async () => {
    const url = await db.fresh();
    const store = createPostgresSessionStore({ url, leaseMs: 5000, notify: true });
    const h = createHarness(createScriptedProviderFromFunction(() => ({ text: 'ok' })), { services: { store } });
    try {
      await (h.session.recorder.store as OpenedLog).ready;
      const id = h.session.id;
      // What an owner that died left: one row taken and logged but not settled, one taken and never logged.
      const logged = await h.session.send('logged before the crash');
      await h.session.idle();
      const before = Number((await sqlRows<{ last: string }>(url, 'SELECT last_seq AS last FROM bridle_sessions WHERE id = $1', [id]))[0]!.last);
      await sqlRows(url, `INSERT INTO bridle_inbox (session, mode, text, taken_epoch, after_seq) VALUES ($1, 'followup', 'logged before the crash', 0, $2)`, [id, logged - 1]);
      await sqlRows(url, `INSERT INTO bridle_inbox (session, mode, text, taken_epoch, after_seq) VALUES ($1, 'followup', 'taken, never logged', 0, $2)`, [id, before]);
      const fresh = await forwardInput(await store.pool(), id, 'followup', 'fresh');
      const source = (await relaySource(store, id))!;
      const stop = startInboxPump(store, owned(h.session, { respond: () => false }), (m) => {
        throw new Error(m);
      });
      try {
        const r = await source.logged(fresh);
        expect(r).toHaveProperty('seq');
        await h.session.idle();
        const rows = await sqlRows<{ text: string; seq: string }>(url, "SELECT COALESCE(forwarded::jsonb->>'text', text) AS text, seq FROM bridle_inbox WHERE session = $1 ORDER BY id", [id]);
        const inputs = h.session.recorder.entries.filter((e) => e.kind === 'session/input');
        expect(inputs.map((e) => (e as { text: string }).text)).toEqual(['logged before the crash', 'taken, never logged', 'fresh']);
        expect(rows.map((x) => [x.text, Number(x.seq)])).toEqual(inputs.map((e) => [(e as { text: string }).text, e.seq]));
        expect(rows[0]!.seq).toBe(String(logged));
        expect((r as { seq: number }).seq).toBe(inputs[2]!.seq);
        expect(h.session.recorder.entries.filter((e) => e.kind === 'turn/end')).toHaveLength(3);
      } finally {
        stop();
      }
    } finally {
      await h.session.close();
      h.cleanup();
      await closeBuses();
    }
  });

  it('an approval answer, a cancel and a compaction forwarded by another worker are applied as a local client\'s and settled with the seq they were logged at, or the owner\'s refusal', async () => {
    const url = await db.fresh();
    const store = createPostgresSessionStore({ url, leaseMs: 5000, notify: true });
    let flush = async () => undefined as void;
    const desk = new ApprovalDesk(() => 'test-session', { beforeAsk: () => flush(), announce: () => undefined });
    let answered = 0;
    // The first two tries find the desk not holding the question yet (an answer that outran the owner's ask): the pump tries again.
    let outrun = 2;
    const counted = { respond: (callId: string, outcome: 'allowed-once' | 'rejected', by: string) => (answered++, outrun-- > 0 ? false : desk.respond(callId, outcome, by)) };
    const script = [{ text: 'asking', toolCalls: [{ name: 'bash', arguments: { command: 'echo hi' } }] }, { text: 'done' }];
    let n = 0;
    const h = createHarness(createScriptedProviderFromFunction(() => script[n++] ?? { text: 'more' }), { services: { store }, approval: 'ask', answerer: desk.answerer });
    flush = () => h.session.recorder.flush();
    try {
      await (h.session.recorder.store as OpenedLog).ready;
      const id = h.session.id;
      const pool = await store.pool();
      const source = (await relaySource(store, id))!;
      const stop = startInboxPump(store, owned(h.session, counted), (m) => {
        throw new Error(m);
      });
      let callId = '';
      let decided!: Entry;
      try {
        await h.session.send('run it');
        for (let i = 0; desk.open().length === 0 && i < 200; i++) await new Promise((r) => setTimeout(r, 10));
        callId = desk.open()[0]!.callId;
        const answer = await source.logged(await forward(pool, id, { kind: 'approval', callId, outcome: 'allowed-once', by: 'ws:on-b', attached: true }));
        decided = h.session.recorder.entries.find((e) => e.kind === 'approval/decided')!;
        expect(decided).toMatchObject({ callId, outcome: 'allowed-once', by: 'ws:on-b' });
        expect(answer).toEqual({ seq: decided.seq });
        expect(answered).toBe(3);
        expect(h.session.recorder.durableUpTo).toBeGreaterThanOrEqual(decided.seq);
        // A second answer is refused as a local client's would be; a cancel with nothing running logs nothing.
        expect(await source.logged(await forward(pool, id, { kind: 'approval', callId, outcome: 'rejected', by: 'ws:on-b', attached: true }))).toEqual({ refused: expect.objectContaining({ code: -32002, reason: 'NOT_PENDING' }) });
        await h.session.idle();
        expect(await source.logged(await forward(pool, id, { kind: 'cancel', by: 'client' }))).toEqual({ seq: 0 });
        expect(h.session.recorder.entries.filter((e) => e.kind === 'session/cancel')).toEqual([]);
        const compacted = await source.logged(await forward(pool, id, { kind: 'compact', by: 'client' }));
        const compact = h.session.recorder.entries.find((e) => e.kind === 'session/compact')!;
        expect(compact).toMatchObject({ by: 'client' });
        expect(compacted).toEqual({ seq: compact.seq });
      } finally {
        stop();
      }
      // What an earlier owner left: this answer taken and its decision logged, then it died before settling. The next owner's
      // pump settles it from the log and does not apply it again.
      const before = answered;
      await sqlRows(url, `INSERT INTO bridle_inbox (session, kind, text, body, taken_epoch, after_seq) VALUES ($1, 'approval', '', $2, 0, $3)`, [id, JSON.stringify({ callId, outcome: 'allowed-once', by: 'ws:dead', attached: true }), decided.seq - 1]);
      const [row] = await sqlRows<{ id: string }>(url, `SELECT id FROM bridle_inbox WHERE session = $1 AND seq IS NULL`, [id]);
      const next = startInboxPump(store, owned(h.session, counted), (m) => {
        throw new Error(m);
      });
      try {
        expect(await source.logged(Number(row!.id))).toEqual({ seq: decided.seq });
        expect(answered).toBe(before);
        expect(h.session.recorder.entries.filter((e) => e.kind === 'tool/result')).toEqual([expect.objectContaining({ status: 'ok' })]);
      } finally {
        next();
      }
    } finally {
      await h.session.close();
      h.cleanup();
      await closeBuses();
    }
  });

  it('a store at schema 2 is migrated to 3: an input row left in its inbox reads as an input', async () => {
    const url = await db.fresh();
    await sqlRows(url, 'CREATE TABLE bridle_schema (version integer NOT NULL)');
    for (const v of [1, 2]) {
      for (const statement of MIGRATIONS[v]!) await sqlRows(url, statement);
      await sqlRows(url, 'INSERT INTO bridle_schema (version) VALUES ($1)', [v]);
    }
    await sqlRows(url, `INSERT INTO bridle_sessions (id) VALUES ('old')`);
    await sqlRows(url, `INSERT INTO bridle_inbox (session, mode, text) VALUES ('old', 'steer', 'left at 2')`);
    const pool = await createPostgresSessionStore({ url }).pool();
    expect(await sqlRows(url, 'SELECT max(version) AS version FROM bridle_schema')).toEqual([{ version: SCHEMA_VERSION }]);
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(3);
    expect(await openInbox(pool, 'old')).toEqual([expect.objectContaining({ kind: 'input', mode: 'steer', text: 'left at 2', takenEpoch: null })]);
  });

  it('a store at schema 3 is migrated to 4: rows left in its inbox read as they were written, and new rows keep a NUL and a lone surrogate', async () => {
    const url = await db.fresh();
    await sqlRows(url, 'CREATE TABLE bridle_schema (version integer NOT NULL)');
    for (const v of [1, 2, 3]) {
      for (const statement of MIGRATIONS[v]!) await sqlRows(url, statement);
      await sqlRows(url, 'INSERT INTO bridle_schema (version) VALUES ($1)', [v]);
    }
    await sqlRows(url, `INSERT INTO bridle_sessions (id) VALUES ('old')`);
    await sqlRows(url, `INSERT INTO bridle_inbox (session, kind, mode, text) VALUES ('old', 'input', 'steer', 'left at 3')`);
    await sqlRows(url, `INSERT INTO bridle_inbox (session, kind, text, body) VALUES ('old', 'cancel', '', '{"by":"ws:c1"}')`);
    const pool = await createPostgresSessionStore({ url }).pool();
    expect(await sqlRows(url, 'SELECT max(version) AS version FROM bridle_schema')).toEqual([{ version: SCHEMA_VERSION }]);
    const odd = 'a \u0000 and a lone \ud800';
    await forwardInput(pool, 'old', 'followup', odd);
    expect(await openInbox(pool, 'old')).toEqual([
      expect.objectContaining({ kind: 'input', mode: 'steer', text: 'left at 3' }),
      expect.objectContaining({ kind: 'cancel', by: 'ws:c1' }),
      expect.objectContaining({ kind: 'input', mode: 'followup', text: odd }),
    ]);
  });
});
