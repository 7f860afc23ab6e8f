/**
 * Live text between workers (ADR 0035), on a real Postgres: the chunks the
 * owner's session streams reach the relay of another worker through
 * NOTIFY, in order, whole (a text delta too big for one notification is
 * split, never cut), and only the relay of that session gets them.
 */
import { expect, it } from 'vitest';
import { createScriptedProviderFromFunction } from '../model/scripted.js';
import { createPostgresSessionStore } from './postgres.js';
import { closeBuses } from './postgres-workers.js';
import type { Chunk } from '../../log/chunks.js';
import type { OpenedLog } from '../../ports/store.js';
import type { Delta } from '../../ports/relay.js';
import type { DeltaSink } from '../../actors/stream-model.js';
import { createHarness } from '../../test/helpers/harness.js';
import { describeWithPostgres } from '../../test/helpers/postgres.js';
import { relaySource, startDeltaPublisher } from './postgres-relay.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeWithPostgres('live text between workers', (db) => {
  it('the owner\'s chunks reach the relay of the session on another worker in order and whole, and no other session\'s relay', async () => {
    const url = await db.fresh();
    const store = createPostgresSessionStore({ url, leaseMs: 5000, notify: true });
    const harnesses = ['live-1', 'live-12'].map((id) => createHarness(createScriptedProviderFromFunction(() => ({ text: 'ok' })), { id, services: { store } }));
    try {
      for (const h of harnesses) await (h.session.recorder.store as OpenedLog).ready;
      const [one, two] = harnesses.map((h) => h.session.id) as [string, string];
      const got: Record<string, Delta[]> = { [one]: [], [two]: [] };
      const sources = await Promise.all([one, two].map((id) => relaySource(store, id)));
      const offs = sources.map((s, i) => s!.deltas!((d) => got[[one, two][i]!]!.push(d)));
      let tap: DeltaSink = () => undefined;
      const stop = startDeltaPublisher(store, { id: one, tapDeltas: (t: DeltaSink) => ((tap = t), () => (tap = () => undefined)) } as never, (m) => {
        throw new Error(m);
      });
      try {
        // The relay's LISTEN is under way: the owner's chunks before it are live text nobody was there to see.
        for (let i = 0; got[one]!.length === 0 && i < 200; i++) (tap({ type: 'block-end', index: 9 }, 't0.s0'), await sleep(25));
        await sleep(100);
        got[one]!.length = 0;
        const text = Array.from({ length: 400 }, (_, i) => `word${i} `);
        const chunks: Chunk[] = [{ type: 'block-start', index: 0, block: { type: 'text' } }, ...text.map((t): Chunk => ({ type: 'text-delta', index: 0, text: t })), { type: 'text-delta', index: 0, text: 'é"'.repeat(5000) }, { type: 'block-end', index: 0 }];
        for (const [i, c] of chunks.entries()) {
          tap(c, 't1.s1');
          if (i % 50 === 0) await sleep(5);
        }
        for (let i = 0; got[one]!.at(-1)?.chunk.type !== 'block-end' && i < 400; i++) await sleep(25);
        const back = got[one]!;
        expect(back.every((d) => d.step === 't1.s1')).toBe(true);
        expect(back[0]!.chunk).toEqual(chunks[0]);
        expect(back.at(-1)!.chunk).toEqual({ type: 'block-end', index: 0 });
        expect(back.map((d) => (d.chunk.type === 'text-delta' ? d.chunk.text : '')).join('')).toBe(text.join('') + 'é"'.repeat(5000));
        // Gathered into a few notifications, not one per chunk.
        expect(back.length).toBeGreaterThan(chunks.length);
        expect(got[two]).toEqual([]);
      } finally {
        stop();
        offs.forEach((off) => off());
      }
    } finally {
      for (const h of harnesses) (await h.session.close(), h.cleanup());
      await closeBuses();
    }
  });
});
