/**
 * Wake-ups on sharded channels (ADR 0061): a session's notifications go on the shard of its id, so a worker
 * listening for one session is not woken by another's; and an input forwarded from another worker is taken
 * by the owner's wake-up, with the owner's poll turned off (an hour), so only a wake-up can deliver it.
 */
import { expect, it } from 'vitest';
import { createScriptedProviderFromFunction } from '../model/scripted.js';
import { createPostgresSessionStore } from './postgres.js';
import { busFor, CHANNEL_SHARDS, channelFor, closeBuses, DELTAS_CHANNEL, ENTRIES_CHANNEL, forward, forwardInput, INBOX_CHANNEL } from './postgres-workers.js';
import { relaySource, startDeltaPublisher, startInboxPump } from './postgres-relay.js';
import type { OwnedSession } from '../../ports/relay.js';
import type { OpenedLog } from '../../ports/store.js';
import { createHarness } from '../../test/helpers/harness.js';
import { describeWithPostgres, sqlRows } from '../../test/helpers/postgres.js';
import { ownedSession } from '../../server/owned-session.js';
import type { HostedSession } from '../../server/hosted-session.js';

const owned = (bridle: unknown) => ownedSession({ bridle, desk: { respond: () => false }, tapDeltas: () => () => undefined } as unknown as HostedSession);

it('a session\'s channel is one shard of its kind, the same for every caller, and sessions spread over the shards', () => {
  expect(channelFor(INBOX_CHANNEL, 'abc')).toBe(channelFor(INBOX_CHANNEL, 'abc'));
  expect(channelFor(INBOX_CHANNEL, 'abc')).toMatch(/^bridle_inbox_([0-9]|[12][0-9]|3[01])$/);
  const used = new Set(Array.from({ length: 200 }, (_, i) => channelFor(INBOX_CHANNEL, `session-${i}`)));
  expect(used.size).toBeGreaterThan(CHANNEL_SHARDS / 2);
});

describeWithPostgres('wake-ups on sharded channels', (db) => {
  it('a worker listening for one session\'s inbox is not woken by another session\'s forwarded input', async () => {
    // Before, every inbox row was notified on one channel, so every owner's LISTEN connection heard every session's.
    const url = await db.fresh();
    const pool = await createPostgresSessionStore({ url }).pool();
    const other = Array.from({ length: 100 }, (_, i) => `other-${i}`).find((x) => channelFor(INBOX_CHANNEL, x) !== channelFor(INBOX_CHANNEL, 'mine'))!;
    await sqlRows(url, "INSERT INTO bridle_sessions (id) VALUES ('mine'), ($1)", [other]);
    const heard: string[] = [];
    let arrived = () => undefined as void;
    const mineHeard = new Promise<void>((r) => (arrived = r));
    let listening = () => undefined as void;
    const ready = new Promise<void>((r) => (listening = r));
    const bus = busFor(url);
    const off = bus.on(channelFor(INBOX_CHANNEL, 'mine'), (p) => (heard.push(p), p === 'mine' && arrived()), listening);
    try {
      await ready;
      // The other session's first, then this one's: one connection delivers them in commit order, so once 'mine' is heard any 'other' would have been.
      await forward(pool, other, { kind: 'cancel', by: 'x' });
      await forward(pool, 'mine', { kind: 'cancel', by: 'x' });
      await mineHeard;
      expect(heard).toEqual(['mine']);
    } finally {
      off();
      await closeBuses();
    }
  });

  it('an input forwarded from another worker is taken by the owner\'s wake-up, its poll turned off', async () => {
    const url = await db.fresh();
    const store = createPostgresSessionStore({ url, leaseMs: 5000, notify: true });
    const h = createHarness(createScriptedProviderFromFunction(() => ({ text: 'ok' })), { services: { store } });
    try {
      await (h.session.recorder.store as OpenedLog).ready;
      const id = h.session.id;
      const source = (await relaySource(store, id))!;
      const stop = startInboxPump(store, owned(h.session), (m) => {
        throw new Error(m);
      }, { pollMs: 3_600_000 });
      try {
        const row = await forwardInput(await store.pool(), id, 'followup', 'from another worker');
        const settled = await source.logged(row);
        const input = h.session.recorder.entries.find((e) => e.kind === 'session/input' && (e as { text: string }).text === 'from another worker');
        expect(settled).toEqual({ seq: input!.seq });
      } finally {
        stop();
      }
    } finally {
      await h.session.close();
      h.cleanup();
      await closeBuses();
    }
  });

  it('a session\'s commits and live text are notified on its own shard, so a relay of another shard hears none of them', async () => {
    // Before, every session's commits and deltas went on one channel each, heard by every relaying worker.
    const url = await db.fresh();
    const store = createPostgresSessionStore({ url, leaseMs: 5000, notify: true });
    const h = createHarness(createScriptedProviderFromFunction(() => ({ text: 'ok' })), { services: { store } });
    const bus = busFor(url);
    try {
      await (h.session.recorder.store as OpenedLog).ready;
      const id = h.session.id;
      const elsewhere = Array.from({ length: 100 }, (_, i) => `s${i}`).map((x) => channelFor(ENTRIES_CHANNEL, x)).find((c) => c !== channelFor(ENTRIES_CHANNEL, id))!;
      const wrong: string[] = [];
      const listen = (channel: string, fn: (p: string) => void) => new Promise<() => void>((r) => { const off = bus.on(channel, fn, () => r(off)); });
      let committed = () => undefined as void;
      const heardCommit = new Promise<void>((r) => (committed = r));
      let delta = () => undefined as void;
      const heardDelta = new Promise<void>((r) => (delta = r));
      const offs = [
        // The one channel of each kind every worker heard before.
        await listen(ENTRIES_CHANNEL, (p) => wrong.push(p)),
        await listen(DELTAS_CHANNEL, (p) => wrong.push(p)),
        await listen(elsewhere, (p) => wrong.push(p)),
        await listen(elsewhere.replace(ENTRIES_CHANNEL, DELTAS_CHANNEL), (p) => wrong.push(p)),
        await listen(channelFor(ENTRIES_CHANNEL, id), (p) => p === id && committed()),
        await listen(channelFor(DELTAS_CHANNEL, id), (p) => p.startsWith(`${id}\n`) && delta()),
      ];
      let tap: (chunk: { type: string }, step: string) => void = () => undefined;
      const hosted = { id, tapDeltas: (fn: typeof tap) => ((tap = fn), () => undefined) } as unknown as OwnedSession;
      const stop = startDeltaPublisher(store, hosted, (m) => {
        throw new Error(m);
      });
      try {
        await h.session.send('hello');
        await h.session.idle();
        tap({ type: 'finish' }, 'step-1');
        await heardCommit;
        await heardDelta;
        // One connection delivers in commit order: a notification on the wrong shard would have come with these.
        expect(wrong).toEqual([]);
      } finally {
        stop();
        offs.forEach((off) => off());
      }
    } finally {
      await h.session.close();
      h.cleanup();
      await closeBuses();
    }
  });
});
