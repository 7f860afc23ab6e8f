/**
 * The owner's inbox pump (ADR 0030): input other workers forwarded to a
 * session is logged by the session's owner once each, in the inbox's order —
 * also when an earlier owner died between taking a row and writing its seq
 * back: a row whose input is in the log already is settled from the log, a
 * row whose input is not is delivered again. A forwarding worker's wait ends
 * with the seq the owner logged.
 */
import pg from 'pg';
import { expect, it } from 'vitest';
import { createScriptedProviderFromFunction } from '../adapters/model/scripted.js';
import { createPostgresSessionStore } from '../adapters/store/postgres.js';
import { closeBuses, forwardInput } from '../adapters/store/postgres-workers.js';
import type { OpenedLog } from '../ports/store.js';
import { createHarness } from '../test/helpers/harness.js';
import { describeWithPostgres } from '../test/helpers/postgres.js';
import { relaySource, startInboxPump } from './serve-workers.js';

async function sql<T>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, values)).rows as T[];
  } finally {
    await c.end();
  }
}

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
      const before = Number((await sql<{ last: string }>(url, 'SELECT last_seq AS last FROM bridle_sessions WHERE id = $1', [id]))[0]!.last);
      await sql(url, `INSERT INTO bridle_inbox (session, mode, text, taken_epoch, after_seq) VALUES ($1, 'followup', 'logged before the crash', 0, $2)`, [id, logged - 1]);
      await sql(url, `INSERT INTO bridle_inbox (session, mode, text, taken_epoch, after_seq) VALUES ($1, 'followup', 'taken, never logged', 0, $2)`, [id, before]);
      const fresh = await forwardInput(await store.pool(), id, 'followup', 'fresh');
      const source = (await relaySource(store, id))!;
      const stop = startInboxPump(store, { bridle: h.session, desk: { respond: () => false } }, (m) => {
        throw new Error(m);
      });
      try {
        const r = await source.logged(fresh);
        expect(r).toHaveProperty('seq');
        await h.session.idle();
        const rows = await sql<{ text: string; seq: string }>(url, 'SELECT text, seq FROM bridle_inbox WHERE session = $1 ORDER BY id', [id]);
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
});
