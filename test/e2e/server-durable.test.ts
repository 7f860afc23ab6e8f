/**
 * What a client of `bridle serve` sees follows one rule (docs/protocol.md, ADR 0073): an entry reaches a client
 * only once the store has said it is durable, and every entry does reach it, in order, once. The store here says
 * "durable" a few milliseconds after it is asked, so an entry sent on its append would be caught.
 */
import { expect, it } from 'vitest';
import type { LogStore } from '../../log/store.js';
import { serverPerTest } from '../helpers/server-per-test.js';

const srv = serverPerTest();

/** A store whose flush takes 3 ms, and that says how far it has made the log durable. */
function slowStore(): LogStore & { durableSeq: number; lastSeq: number; flushes: number } {
  const s = {
    location: 'memory://slow',
    durableSeq: 0,
    lastSeq: 0,
    flushes: 0,
    append(entry: { seq: number }) {
      s.lastSeq = entry.seq;
    },
    async flush() {
      const upTo = s.lastSeq;
      s.flushes++;
      await new Promise((r) => setTimeout(r, 3));
      s.durableSeq = Math.max(s.durableSeq, upTo);
    },
    async close() {
      await s.flush();
    },
  };
  return s;
}

it('a client sees an entry only once the store has made it durable, and sees every entry, in order, once', async () => {
  const stores: ReturnType<typeof slowStore>[] = [];
  await srv.start((_r, i) => (i === 0 ? { text: 'Looking.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] } : { text: 'done' }), {
    store: () => {
      const s = slowStore();
      stores.push(s);
      return s;
    },
  });
  const c = await srv.connect();
  const seen: { seq: number; durableThen: number }[] = [];
  c.ws.on('message', (data) => {
    const m = JSON.parse(data.toString()) as { method?: string; params?: { entry?: { seq: number } } };
    // Server and store are in this process: the store's word at the moment the client reads the entry.
    if (m.method === 'session/entry') seen.push({ seq: m.params!.entry!.seq, durableThen: stores[0]!.durableSeq });
  });
  const { sessionId } = await c.call('session/create', {});
  await c.call('session/attach', { sessionId });
  for (const text of ['one', 'two']) {
    await c.call('session/input', { sessionId, text });
    await c.waitFor((m) => m.method === 'session/state' && m.params.value === 'idle' && seen.some((s) => s.seq === stores[0]!.lastSeq));
  }
  await c.call('session/close', { sessionId });
  await c.waitFor((m) => m.method === 'session/closed');
  const store = stores[0]!;
  expect(store.lastSeq).toBeGreaterThan(10);
  for (const s of seen) expect(s.seq, `entry ${s.seq} reached the client when the store had made ${s.durableThen} durable`).toBeLessThanOrEqual(s.durableThen);
  expect(seen.map((s) => s.seq)).toEqual(Array.from({ length: store.lastSeq }, (_, i) => i + 1));
});
