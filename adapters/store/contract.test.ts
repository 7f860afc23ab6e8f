/**
 * The store contract (docs/design.md §3: one suite runs against every store): memory,
 * JSONL and Postgres alike. What the recorder appends comes back from `tail`
 * as the same lines, in seq order, from any seq; a log reopened goes on
 * where it ended; sessions are apart; a store with writer claims refuses a
 * second writer while the first holds its claim, and not once it has closed;
 * and a whole session run on a store is byte for byte what the JSONL store
 * writes of it.
 */
import { readFileSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createScriptedProviderFromFunction } from '../model/scripted.js';
import { LOG_FORMAT } from '../../log/entries-session.js';
import type { Draft } from '../../log/entries.js';
import { SessionLockedError } from '../../log/errors.js';
import { Recorder } from '../../log/recorder.js';
import type { SessionStore } from '../../ports/store.js';
import { createHarness, steppingClock } from '../../test/helpers/harness.js';
import { describeWithPostgres } from '../../test/helpers/postgres.js';
import { jsonlStore } from './jsonl.js';
import { createMemorySessionStore } from './memory.js';
import { createPostgresSessionStore } from './postgres.js';
import { forkSession } from '../../runtime/logs/fork.js';
import { repairSession } from '../../runtime/logs/repair.js';
import { tempDir } from '../../test/helpers/temp.js';

const noServices = { get: () => { throw new Error('no services here'); }, has: () => false, onDispose: () => undefined };
const storeDir = () => realpathSync(tempDir('bridle-contract-'));
const jsonlIn = (dir: string): SessionStore => jsonlStore.create({ dir }, noServices as never);

let n = 0;
const freshId = () => `s${++n}-${process.pid}`;
const start = (id: string): Draft => ({ kind: 'session/start', id, cwd: '/w', model: 'm', depth: 0, parent: null, format: LOG_FORMAT });
const turn = (k: number, text: string): Draft[] => [
  { kind: 'turn/start', turn: `t${k}`, input: text },
  { kind: 'user/message', turn: `t${k}`, text, origin: 'user', surfaceOp: 'append' },
  { kind: 'turn/end', turn: `t${k}`, reason: 'completed', steps: 0 },
];

/** A format 2 turn: it takes the input logged before it (at seq `from`). */
const taken = (k: number, text: string, from: number): Draft[] => [{ kind: 'session/input', mode: 'followup', text, origin: 'user' }, ...turn(k, text).map((d) => (d.kind === 'turn/start' ? { ...d, from } : d))];

/** Writes `drafts` to session `id` of `store` through a recorder, flushing after each, then closes. */
async function write(store: SessionStore, id: string, drafts: Draft[], existing: string[] = []) {
  const log = store.open(id);
  const recorder = new Recorder(log, steppingClock(), existing.map((l) => JSON.parse(l)));
  for (const d of drafts) {
    recorder.append(d);
    await recorder.flush();
  }
  await log.close();
  return recorder;
}

function storeContract(name: string, make: () => SessionStore, o: { claims: boolean }) {
  describe(`the ${name} store keeps the store contract`, () => {
    it('gives back every line the recorder wrote, in seq order, from any seq', async () => {
      const store = make();
      const id = freshId();
      const r = await write(store, id, [start(id), ...turn(1, 'hé 🙂 "quoted" \\ back\nslash'), ...turn(2, '\u2028 and \u0001')]);
      const lines = r.entries.map((e) => JSON.stringify(e));
      expect(await store.tail!(id)).toEqual(lines);
      expect(await store.tail!(id, 3)).toEqual(lines.slice(2));
      expect(await store.tail!(id, 8)).toEqual([]);
      expect(await store.tail!('no-such-session')).toBeUndefined();
    });

    it('holds a NUL and lone surrogates byte for byte, in an entry and in the header, as the JSONL store does (issue 20 item 14)', async () => {
      const store = make();
      const id = freshId();
      const odd = 'nul \u0000 here, a lone high \ud800 and a lone low \udfff, a pair \ud83d\ude42, \u0000\u0000 twice';
      const header: Draft = { ...start(id), cwd: `/w/\u0000\ud800` } as Draft;
      const r = await write(store, id, [header, { kind: 'session/input', mode: 'followup', text: odd, origin: 'user' }, ...turn(1, odd)]);
      const lines = r.entries.map((e) => JSON.stringify(e));
      expect(await store.tail!(id)).toEqual(lines);
      const back = (await store.tail!(id))!.map((l) => JSON.parse(l) as { text?: string; cwd?: string });
      expect(back[1]!.text).toBe(odd);
      expect(back[0]!.cwd).toBe('/w/\u0000\ud800');
      // Reopened, it goes on after them.
      const again = await write(store, id, turn(2, odd), lines);
      expect(await store.tail!(id)).toEqual(again.entries.map((e) => JSON.stringify(e)));
    });

    it('goes on where a reopened log ended; sessions are kept apart', async () => {
      const store = make();
      const a = freshId();
      const b = freshId();
      await write(store, a, [start(a), ...turn(1, 'one')]);
      await write(store, b, [start(b)]);
      const before = (await store.tail!(a))!;
      const r = await write(store, a, turn(2, 'two'), before);
      expect(r.entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(await store.tail!(a)).toEqual(r.entries.map((e) => JSON.stringify(e)));
      expect((await store.tail!(b))!.map((l) => JSON.parse(l).kind)).toEqual(['session/start']);
    });

    it('resolves a flush with nothing new, and a second close', async () => {
      const store = make();
      const id = freshId();
      const log = store.open(id);
      const r = new Recorder(log, steppingClock());
      await r.flush();
      r.append(start(id));
      await r.flush();
      await r.flush();
      await log.close();
      await log.close();
      expect(await store.tail!(id)).toHaveLength(1);
    });

    it.runIf(o.claims)('refuses a second writer while the claim is held, and not once the log is closed', async () => {
      const store = make();
      const id = freshId();
      const lock = await store.claim!(id);
      const log = store.open(id, { lock });
      const r = new Recorder(log, steppingClock());
      r.append(start(id));
      await r.flush();
      await expect(store.claim!(id)).rejects.toBeInstanceOf(SessionLockedError);
      await log.close();
      const again = await store.claim!(id);
      expect(again.tookOver).toBeUndefined();
      again.release();
    });

    it.runIf(o.claims)('a claim right after the same process released the session is granted, at once, a hundred times over', async () => {
      const store = make();
      const id = freshId();
      let lock = await store.claim!(id);
      // No wait between the release and the next claim: the store itself must order them.
      for (let k = 0; k < 100; k++) {
        lock.release();
        lock = await store.claim!(id);
        expect(lock.tookOver).toBeUndefined();
      }
      lock.release();
    });

    it('forkSession copies a session\'s lines into a new one of the same store, byte for byte but its header (ADR 0029)', async () => {
      const store = make();
      const id = freshId();
      await write(store, id, [start(id), ...taken(1, 'one', 2), ...taken(2, 'two', 6)]);
      const before = (await store.tail!(id))!;
      const fork = freshId();
      const f = await forkSession({ store, session: id, id: fork, at: 6, clock: steppingClock() });
      expect(f.forkOf).toEqual({ session: id, seq: 5 });
      const lines = (await store.tail!(fork))!;
      expect(lines.slice(1)).toEqual(before.slice(1, 5));
      expect(JSON.parse(lines[0]!)).toMatchObject({ kind: 'session/start', id: fork, forkOf: { session: id, seq: 5 } });
      expect(await store.tail!(id)).toEqual(before);
      await expect(forkSession({ store, session: id, id: fork, clock: steppingClock() })).rejects.toMatchObject({ code: 'FORK_EXISTS' });
    });

    it('lists its sessions with their last marker, and finds a session\'s forks, through the port (issue 24 item 1)', async () => {
      const store = make();
      const id = freshId();
      await write(store, id, [start(id), ...taken(1, 'one', 2)]);
      const fork = freshId();
      await forkSession({ store, session: id, id: fork, clock: steppingClock() });
      const { sessions } = await store.list();
      expect(sessions.find((x) => x.id === id)).toMatchObject({ id, lastSeq: 5, cwd: '/w', model: 'm', marker: 'turn/end' });
      expect(sessions.find((x) => x.id === id)?.owner).toBeUndefined();
      expect(await store.forks(id)).toEqual([{ id: fork, seq: 5, location: store.locate(fork) }]);
      expect((await store.read(id))?.lines).toEqual(await store.tail(id));
      expect(await store.read('no-such-session')).toBeUndefined();
    });

    it('lists a session\'s last activity and its first input as title; deletes it under the claim, never while another writer holds it (ADR 0063)', async (ctx) => {
      const store = make();
      if (!store.delete) return ctx.skip();
      const id = freshId();
      await write(store, id, [start(id), ...taken(1, `fix the failing test\nand more ${'x'.repeat(100)}`, 2)]);
      const last = JSON.parse((await store.tail(id))!.at(-1)!) as { at: string };
      expect((await store.list()).sessions.find((x) => x.id === id)).toMatchObject({ updatedAt: last.at, title: 'fix the failing test' });
      const held = store.open(id);
      // A store whose claim is asynchronous (Postgres) holds the session once `ready` settles.
      await held.ready;
      await expect(store.delete(id)).rejects.toBeInstanceOf(SessionLockedError);
      expect(await store.read(id)).toBeDefined();
      await held.close();
      expect(await store.delete(id)).toBe(true);
      expect(await store.read(id)).toBeUndefined();
      expect(await store.delete(id)).toBe(false);
      // Nothing of its claim is left: the id opens afresh.
      await (store.open(id)).close();
    });

    it('repairSession closes a crashed turn through the port, under the claim, which it leaves held (issue 24 item 1)', async () => {
      const store = make();
      const id = freshId();
      await write(store, id, [start(id), ...taken(1, 'one', 2).slice(0, 3)]);
      const lock = await store.claim(id);
      try {
        const r = await repairSession(store, id, lock, steppingClock());
        expect(r?.ok && r.appended.map((e) => e.kind)).toContain('turn/end');
        // Still held: a second writer is refused while the session goes on under it.
        await expect(store.claim(id)).rejects.toBeInstanceOf(SessionLockedError);
        const again = await repairSession(store, id, lock, steppingClock());
        expect(again?.ok && again.appended).toEqual([]);
      } finally {
        lock.release();
      }
      expect((await store.tail(id))!.map((l) => JSON.parse(l).kind).at(-1)).toBe('turn/end');
    });

    it('holds a whole session byte for byte as the JSONL store writes it', async () => {
      const dir = storeDir();
      // One workspace for both runs: the log names it.
      const cwd = storeDir();
      const run = async (services: { store: SessionStore }) => {
        rmSync(join(cwd, 'a.txt'), { force: true });
        const model = createScriptedProviderFromFunction((req) => {
          const results = req.messages.filter((m) => m.role === 'tool').length;
          if (results === 0) return { text: 'writing ✓', toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'ünïcode\n' } }] };
          if (results === 1) return { text: 'reading', toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] };
          return { text: 'done: "a.txt" holds it' };
        });
        const h = createHarness(model, { services, cwd });
        try {
          await h.session.run('write then read a file');
          await h.session.close();
          return h.session.id;
        } finally {
          h.cleanup();
        }
      };
      const id = await run({ store: jsonlIn(dir) });
      const jsonl = readFileSync(join(dir, `${id}.jsonl`), 'utf8');
      expect(jsonl.split('\n').length).toBeGreaterThan(12);
      // A directory of its own: the JSONL store every other case shares holds a session of this id already.
      const isolated = name === 'jsonl' ? jsonlIn(storeDir()) : make();
      await run({ store: isolated });
      const lines = (await isolated.tail!(id))!;
      expect(lines.join('\n') + '\n').toBe(jsonl);
    });
  });
}

storeContract('memory', () => createMemorySessionStore(), { claims: true });
const dir = storeDir();
storeContract('jsonl', () => jsonlIn(dir), { claims: true });
describeWithPostgres('the Postgres store', (db) => {
  storeContract('postgres', () => createPostgresSessionStore({ url: db.url(), leaseMs: 5000 }), { claims: true });
});
