/**
 * The sweep's index (ADR 0061, schema 5): a store at schema 4 holding sessions is migrated to 5 and its
 * sweep still finds the same candidates; and the sweep's look for expired or released leases reads the
 * index `bridle_sessions_lease` rather than the whole sessions table, on a table of many live leases
 * (the plan is asserted, never a time).
 */
import { expect, it } from 'vitest';
import { createPostgresSessionStore } from './postgres.js';
import { MIGRATIONS } from './postgres-schema.js';
import { EXPIRED_WITH_WORK, SESSION_INPUT_LINE } from './postgres-workers.js';
import { sweepSource } from './postgres-relay.js';
import { MARKER_LINE } from '../../log/markers.js';
import { describeWithPostgres, sqlRows } from '../../test/helpers/postgres.js';

const line = (seq: number, kind: string, more = '') => `{"seq":${seq},"at":"2026-12-01T00:00:00.000Z","kind":"${kind}"${more}}`;

/** Sessions as an earlier bridle left them: `n` live leases at rest, one expired mid-turn, one released with queued input. */
async function fill(url: string, live: number): Promise<void> {
  const header = `'{"cwd":"/w","model":"m"}'::jsonb`;
  const owner = `'{"pid":4242,"host":"h","since":"2026-12-01T00:00:00.000Z"}'::jsonb`;
  await sqlRows(url, `INSERT INTO bridle_sessions (id, header, owner, epoch, lease_expires, last_seq) SELECT 'live-' || g, ${header}, ${owner}, 1, now() + interval '1 hour', 1 FROM generate_series(1, ${live}) g`);
  await sqlRows(url, `INSERT INTO bridle_entries (session, seq, line) SELECT 'live-' || g, 1, $1 FROM generate_series(1, ${live}) g`, [line(1, 'session/start')]);
  await sqlRows(url, `INSERT INTO bridle_sessions (id, header, owner, epoch, lease_expires, last_seq) VALUES ('died-mid-turn', ${header}, ${owner}, 1, now() - interval '1 second', 2), ('released-queued', ${header}, NULL, 1, NULL, 2)`);
  await sqlRows(url, `INSERT INTO bridle_entries (session, seq, line) VALUES ('died-mid-turn', 1, $1), ('died-mid-turn', 2, $2), ('released-queued', 1, $1), ('released-queued', 2, $3)`, [
    line(1, 'session/start'),
    line(2, 'turn/start', ',"from":1'),
    line(2, 'session/input', ',"mode":"followup","text":"x"'),
  ]);
}

/** Every node of a JSON plan, depth first. */
function nodes(plan: Record<string, unknown>): Record<string, unknown>[] {
  return [plan, ...((plan.Plans as Record<string, unknown>[] | undefined) ?? []).flatMap(nodes)];
}

describeWithPostgres('the sweep\'s index on lease expiry', (db) => {
  it('a store at schema 4 holding sessions is migrated to 5, the index made, and its sweep finds the same candidates', async () => {
    const url = await db.fresh();
    await sqlRows(url, 'CREATE TABLE bridle_schema (version integer NOT NULL)');
    for (const v of [1, 2, 3, 4]) {
      for (const statement of MIGRATIONS[v]!) await sqlRows(url, statement);
      await sqlRows(url, 'INSERT INTO bridle_schema (version) VALUES ($1)', [v]);
    }
    await fill(url, 20);
    const store = createPostgresSessionStore({ url });
    await store.pool();
    expect(await sqlRows(url, 'SELECT max(version) AS version FROM bridle_schema')).toEqual([{ version: 5 }]);
    expect(await sqlRows(url, "SELECT indexname FROM pg_indexes WHERE tablename = 'bridle_sessions' AND indexname = 'bridle_sessions_lease'")).toHaveLength(1);
    expect((await sweepSource(store).candidates(10)).sort()).toEqual(['died-mid-turn', 'released-queued']);
  });

  it('the sweep\'s look for expired or released leases reads the lease index, not every row of a table of many live leases', async () => {
    // Before schema 5 every look scanned the whole sessions table (55 ms at 10,000 sessions, issue 26 item 3).
    const url = await db.fresh();
    const store = createPostgresSessionStore({ url });
    await store.pool();
    await fill(url, 5000);
    await sqlRows(url, 'ANALYZE bridle_sessions');
    await sqlRows(url, 'ANALYZE bridle_entries');
    const [row] = await sqlRows<{ 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }>(url, `EXPLAIN (FORMAT JSON) ${EXPIRED_WITH_WORK}`, [MARKER_LINE.source, SESSION_INPUT_LINE, [], [], 4]);
    const all = nodes(row!['QUERY PLAN'][0].Plan);
    const onSessions = all.filter((n) => n['Relation Name'] === 'bridle_sessions' || n['Index Name'] === 'bridle_sessions_lease');
    expect(onSessions.map((n) => n['Index Name'])).toContain('bridle_sessions_lease');
    expect(all.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'bridle_sessions')).toEqual([]);
    expect((await sweepSource(store).candidates(10)).sort()).toEqual(['died-mid-turn', 'released-queued']);
  });
});
