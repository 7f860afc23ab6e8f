/**
 * `session/list` and `session/delete` of `bridle acp` on the Postgres store (ADR 0063, 0076), through the
 * official SDK's client: a delete removes the session's rows through the store, never while another worker
 * holds its lease (`SESSION_LOCKED`, naming it), and a second delete is answered as the first (idempotent).
 */
import { methods, RequestError } from '@agentclientprotocol/sdk';
import { expect, it } from 'vitest';
import { createPostgresSessionStore } from '../adapters/store/postgres.js';
import { recordingClient } from '../test/helpers/acp.js';
import { useAcpWorld } from '../test/helpers/acp-world.js';
import { describeWithPostgres, sqlRows } from '../test/helpers/postgres.js';

const w = useAcpWorld();
const refusal = (p: Promise<unknown>) => p.then(() => undefined, (err: unknown) => err as RequestError);

describeWithPostgres('bridle acp on the Postgres store', (db) => {
  it('session/list lists its sessions with title; session/delete removes one\'s rows, refuses SESSION_LOCKED while another worker holds it', async () => {
    const agent = await w.agentWith({ model: `scripted:${w.script([{ text: 'a' }])}`, store: db.url() });
    const other = createPostgresSessionStore({ url: db.url(), leaseMs: 5000 }, { pid: 424242, host: 'worker-b' });
    const { app } = recordingClient();
    const out = await app.connectWith(agent.app, async (ctx) => {
      const mine = await w.start(ctx);
      await w.prompt(ctx, mine, 'on postgres');
      const theirs = (await ctx.request(methods.agent.session.new, { cwd: w.ws, mcpServers: [] })).sessionId;
      await ctx.request(methods.agent.session.close, { sessionId: theirs });
      // Another worker takes the lease on it, as a `bridle serve` sharing the database would.
      const held = await other.claim(theirs);
      const listed = await ctx.request(methods.agent.session.list, {});
      const locked = await refusal(ctx.request(methods.agent.session.delete, { sessionId: theirs }));
      held.release();
      await ctx.request(methods.agent.session.delete, { sessionId: mine });
      const again = await ctx.request(methods.agent.session.delete, { sessionId: mine });
      return { mine, theirs, listed, locked, again, after: await ctx.request(methods.agent.session.list, {}) };
    });
    expect(out.listed.sessions.find((s) => s.sessionId === out.mine)).toMatchObject({ cwd: w.ws, title: 'on postgres', updatedAt: expect.any(String) });
    expect(out.locked).toMatchObject({ code: -32003, data: { reason: 'SESSION_LOCKED' } });
    expect(out.locked!.message).toContain('pid 424242 on worker-b');
    expect(await other.tail(out.theirs)).toBeDefined();
    expect(await sqlRows(db.url(), 'SELECT count(*)::int AS n FROM bridle_entries WHERE session = $1', [out.mine])).toEqual([{ n: 0 }]);
    expect(await other.tail(out.mine)).toBeUndefined();
    expect(out.again).toEqual({});
    expect(out.after.sessions.map((s) => s.sessionId)).toEqual([out.theirs]);
  });
});
