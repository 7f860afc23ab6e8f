/**
 * Group fsync (ADR 0028): the JSONL store starts a sync one microtask after it
 * is asked for, so the flushes of parallel calls released together share it,
 * and no flush hears "durable" before a sync that covers its lines finished.
 */
import * as nodeFs from 'node:fs';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noopReadOnceTool } from '../../bench/noop-tool.js';
import { benchSession } from '../../bench/session.js';
import { Recorder } from '../../log/recorder.js';
import { createJsonlStore, type JsonlFs } from './jsonl.js';
import { tempDir } from '../../test/helpers/temp.js';

/** `node:fs`, writing down each line's kind as it is written and each fdatasync as it starts and as it ends. */
function tracingFs(fail = false) {
  const events: string[] = [];
  const fs: JsonlFs = {
    mkdirSync: (p, o) => nodeFs.mkdirSync(p, o),
    openSync: (p, flags, mode) => nodeFs.openSync(p, flags, mode),
    writeSync: (fd, buf, off) => {
      const line = buf.toString('utf8', off);
      const kind = /"kind":"([^"]+)"/.exec(line)?.[1];
      const callId = /"callId":"([^"]+)"/.exec(line)?.[1];
      events.push(`write ${kind}${callId ? ` ${callId}` : ''}`);
      return nodeFs.writeSync(fd, buf, off);
    },
    ftruncateSync: (fd, len) => nodeFs.ftruncateSync(fd, len),
    fstatSync: (fd) => nodeFs.fstatSync(fd),
    open: (p, flags, done) => nodeFs.open(p, flags, done),
    fdatasync: (fd, done) => {
      events.push('sync start');
      if (fail) return void setImmediate(() => (events.push('sync failed'), done(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }))));
      nodeFs.fdatasync(fd, (err) => (events.push('sync end'), done(err)));
    },
    fsync: (fd, done) => nodeFs.fsync(fd, done),
    close: (fd, done) => nodeFs.close(fd, done),
    closeSync: (fd) => nodeFs.closeSync(fd),
  };
  return { fs, events };
}

const newLog = () => join(realpathSync(tempDir('bridle-group-')), 'sessions', 's.jsonl');
const header = { kind: 'session/start', id: 's', cwd: '/w', model: 'm', depth: 0, parent: null, format: 2 } as const;

describe('group fsync in the JSONL store (ADR 0028)', () => {
  it('parallel tool calls released together share one fsync for their dispatches', async () => {
    const { fs, events } = tracingFs();
    const session = benchSession({
      id: 's',
      // Two read-only calls in one answer: the step releases them together. Not idempotent, so their dispatches are flushed (ADR 0072).
      respond: (_r, i) => (i === 0 ? { toolCalls: [{ name: 'noop_read_once', arguments: { n: 1 } }, { name: 'noop_read_once', arguments: { n: 2 } }] } : { text: 'done' }),
      tools: [noopReadOnceTool],
      store: createJsonlStore(newLog(), { fs }),
    });
    const out = await session.run('go');
    await session.close();
    expect(out.reason).toBe('completed');
    const first = events.indexOf('write tool/dispatch t1.s1.c1');
    const second = events.indexOf('write tool/dispatch t1.s1.c2');
    const result = events.findIndex((e) => e.startsWith('write tool/result'));
    expect(first).toBeGreaterThan(-1);
    // Both dispatches are written before a sync starts, one sync covers both, and no body ran before it ended
    // (an earlier sync, of the lines before them, may still be ending).
    expect(second).toBe(first + 1);
    const between = events.slice(first, result);
    expect(between.filter((e) => e === 'sync start')).toHaveLength(1);
    expect(between.indexOf('sync start')).toBeGreaterThan(between.indexOf('write tool/dispatch t1.s1.c2'));
    expect(between.at(-1)).toBe('sync end');
  });

  it('a flush asked for while a sync runs waits for a sync of its own, which covers every line appended until it starts', async () => {
    const { fs, events } = tracingFs();
    const r = new Recorder(createJsonlStore(newLog(), { fs }), () => 0);
    r.append(header);
    const one = r.flush();
    // The sync starts in the round at the end of this tick (ADR 0073); once it is under way, lines appended need the next one.
    while (!events.includes('sync start')) await new Promise((res) => setImmediate(res));
    r.append({ kind: 'turn/start', turn: 't1', input: 'x' });
    const two = r.flush();
    r.append({ kind: 'turn/start', turn: 't2', input: 'y' });
    const three = r.flush();
    await one;
    expect(r.durableUpTo).toBe(1);
    await Promise.all([two, three]);
    expect(r.durableUpTo).toBe(3);
    await r.store.close();
    expect(events.filter((e) => e.startsWith('sync start'))).toHaveLength(2);
    expect(events.indexOf('sync start', events.indexOf('write turn/start'))).toBeGreaterThan(events.lastIndexOf('write turn/start'));
  });

  it('a shared sync that fails fails every flush that joined it, and every later one', async () => {
    const { fs } = tracingFs(true);
    const r = new Recorder(createJsonlStore(newLog(), { fs }), () => 0);
    r.append(header);
    const a = r.flush();
    r.append({ kind: 'turn/start', turn: 't1', input: 'x' });
    const b = r.flush();
    await expect(a).rejects.toMatchObject({ code: 'LOG_NOT_DURABLE', sysCode: 'EIO' });
    await expect(b).rejects.toMatchObject({ code: 'LOG_NOT_DURABLE', sysCode: 'EIO' });
    await expect(r.flush()).rejects.toMatchObject({ code: 'LOG_NOT_DURABLE' });
    expect(r.durableUpTo).toBe(0);
    await expect(r.store.close()).rejects.toThrow('EIO');
  });
});
