/**
 * Group commit across sessions on JSONL (ADR 0073): the syncs every log of the process asks for in one tick run
 * as one round, one fdatasync per file; the ones asked for while a round runs wait for the next, together; and a
 * log whose sync fails fails alone.
 */
import * as nodeFs from 'node:fs';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Recorder } from '../../log/recorder.js';
import { createFlushRounds } from './flush-rounds.js';
import { createJsonlStore, syncAll, type JsonlFs } from './jsonl.js';
import { tempDir } from '../../test/helpers/temp.js';

const dir = () => realpathSync(tempDir('bridle-rounds-'));
const header = (id: string) => ({ kind: 'session/start', id, cwd: '/w', model: 'm', depth: 0, parent: null, format: 2 }) as const;

/** `node:fs`, counting fdatasyncs by file descriptor; `failing` ones fail EIO. */
function countingFs(failing: Set<number> = new Set()) {
  const syncs = new Map<number, number>();
  const fs: JsonlFs = {
    ...nodeFs,
    fdatasync: (fd, done) => {
      syncs.set(fd, (syncs.get(fd) ?? 0) + 1);
      if (failing.has(fd)) return void setImmediate(() => done(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })));
      nodeFs.fdatasync(fd, done);
    },
    openSync: (p, flags, mode) => nodeFs.openSync(p, flags, mode),
  };
  return { fs, syncs };
}

describe('rounds of JSONL syncs across sessions (ADR 0073)', () => {
  it("eight sessions' flushes of one tick are one round: one fdatasync per file, each session durable", async () => {
    const { fs, syncs } = countingFs();
    const rounds = createFlushRounds(syncAll);
    const d = dir();
    const recs = Array.from({ length: 8 }, (_, k) => new Recorder(createJsonlStore(join(d, `s${k}.jsonl`), { fs, rounds }), () => 0));
    for (const [k, r] of recs.entries()) r.append(header(`s${k}`));
    for (const r of recs) r.append({ kind: 'turn/start', turn: 't1', input: 'x' });
    // Two flushes per session in the same tick, as a durability point and the server's flush would ask.
    await Promise.all(recs.flatMap((r) => [r.flush(), r.flush()]));
    expect(rounds.stats).toEqual({ rounds: 1, members: 8 });
    expect([...syncs.values()]).toEqual(Array(8).fill(1));
    for (const r of recs) expect(r.durableUpTo).toBe(2);
    await Promise.all(recs.map((r) => r.store.close()));
  });

  it('flushes asked for while a round runs wait for the next round, all of them in it', async () => {
    const { fs } = countingFs();
    const rounds = createFlushRounds(syncAll);
    const d = dir();
    const recs = Array.from({ length: 4 }, (_, k) => new Recorder(createJsonlStore(join(d, `s${k}.jsonl`), { fs, rounds }), () => 0));
    recs[0]!.append(header('s0'));
    const first = recs[0]!.flush();
    while (rounds.stats.rounds === 0) await new Promise((res) => setImmediate(res));
    // The first round is under way: these three sessions' flushes, asked for over several ticks, share the next.
    for (const [k, r] of recs.entries()) {
      r.append(k === 0 ? { kind: 'turn/start', turn: 't1', input: 'x' } : header(`s${k}`));
      void r.flush();
    }
    await first;
    await Promise.all(recs.map((r) => r.flush()));
    expect(rounds.stats).toEqual({ rounds: 2, members: 5 });
    expect(recs.map((r) => r.durableUpTo)).toEqual([2, 1, 1, 1]);
    await Promise.all(recs.map((r) => r.store.close()));
  });

  it("a log whose sync fails in a shared round fails alone, for good; the others' flushes succeed, then and later", async () => {
    const failing = new Set<number>();
    const { fs } = countingFs(failing);
    let lastFd = -1;
    const opening: JsonlFs = { ...fs, openSync: (p, flags, mode) => (lastFd = nodeFs.openSync(p, flags, mode)) };
    const rounds = createFlushRounds(syncAll);
    const d = dir();
    const recs = Array.from({ length: 3 }, (_, k) => {
      const r = new Recorder(createJsonlStore(join(d, `s${k}.jsonl`), { fs: opening, rounds }), () => 0);
      if (k === 1) failing.add(lastFd);
      r.append(header(`s${k}`));
      return r;
    });
    const outs = await Promise.allSettled(recs.map((r) => r.flush()));
    expect(rounds.stats.rounds).toBe(1);
    expect(outs.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outs[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'LOG_NOT_DURABLE', sysCode: 'EIO' });
    for (const r of recs) r.append({ kind: 'turn/start', turn: 't1', input: 'x' });
    const again = await Promise.allSettled(recs.map((r) => r.flush()));
    expect(again.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(recs.map((r) => r.durableUpTo)).toEqual([2, 0, 2]);
    await recs[0]!.store.close();
    await recs[2]!.store.close();
  });
});
