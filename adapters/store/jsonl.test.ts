import * as nodeFs from 'node:fs';
import { mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLog } from '../../log/parse.js';
import { Recorder } from '../../log/recorder.js';
import { createJsonlStore, type JsonlFs } from './jsonl.js';
import { createMemoryStore } from './memory.js';
import { tempDir } from '../../test/helpers/temp.js';

describe('the JSONL store behind a recorder', () => {
  it('writes canonical lines in seq order that read back identically', async () => {
    const path = join(tempDir('bridle-jsonl-'), 'sessions', 's.jsonl');
    let t = Date.UTC(2026, 0, 1);
    const r = new Recorder(createJsonlStore(path), () => t++);
    r.append({ kind: 'session/start', id: 's', cwd: '/w', model: 'm', depth: 0, parent: null, format: 1 });
    r.append({ kind: 'turn/start', turn: 't1', input: 'hé 🙂' });
    await r.store.close();
    const text = readFileSync(path, 'utf8');
    const { entries } = parseLog(text);
    expect(entries.map((e) => e.seq)).toEqual([1, 2]);
    expect(entries.map((e) => JSON.stringify(e)).join('\n') + '\n').toBe(text);
    expect(entries[1]!.at).toBe('2026-01-01T00:00:00.001Z');
  });

  it('refuses a draft that fails its schema, and writes nothing for it', () => {
    const store = createMemoryStore();
    const r = new Recorder(store, () => 0);
    expect(() => r.append({ kind: 'turn/start', turn: 'x1', input: '' })).toThrow();
    expect(store.lines).toEqual([]);
  });

  it('tells durable listeners only after a flush, once each, in order', async () => {
    // A store with a flush of its own to wait for (the memory store's appends are durable at once: log/recorder.test.ts).
    const r = new Recorder({ ...createMemoryStore(), flush: async () => {} }, () => 0);
    const live: number[] = [];
    const durable: number[] = [];
    r.onEntry((e) => live.push(e.seq));
    r.onDurable((e) => durable.push(e.seq));
    r.append({ kind: 'session/start', id: 's', cwd: '/w', model: 'm', depth: 0, parent: null, format: 1 });
    r.append({ kind: 'turn/start', turn: 't1', input: 'x' });
    expect(live).toEqual([1, 2]);
    expect(durable).toEqual([]);
    await r.flush();
    await r.flush();
    expect(durable).toEqual([1, 2]);
  });
});

/** `node:fs`, with every fsync and fdatasync written down by the path it was opened with, when it finished, and how. */
function recordingFs(fail?: (path: string) => boolean) {
  const paths = new Map<number, string>();
  const calls: string[] = [];
  const fs: JsonlFs = {
    mkdirSync: (p, o) => nodeFs.mkdirSync(p, o),
    openSync: (p, flags, mode) => {
      const fd = nodeFs.openSync(p, flags, mode);
      paths.set(fd, p);
      return fd;
    },
    writeSync: (fd, buf, off) => nodeFs.writeSync(fd, buf, off),
    ftruncateSync: (fd, len) => nodeFs.ftruncateSync(fd, len),
    fstatSync: (fd) => nodeFs.fstatSync(fd),
    open: (p, flags, done) =>
      nodeFs.open(p, flags, (err, fd) => {
        if (!err) paths.set(fd, p);
        done(err, fd);
      }),
    fdatasync: (fd, done) => nodeFs.fdatasync(fd, (err) => (calls.push(`fdatasync ${paths.get(fd)}`), done(err))),
    fsync: (fd, done) => {
      const p = paths.get(fd)!;
      if (fail?.(p)) return void (calls.push(`fsync ${p} failed`), done(Object.assign(new Error('EIO'), { code: 'EIO' })));
      nodeFs.fsync(fd, (err) => (calls.push(`fsync ${p}`), done(err)));
    },
    close: (fd, done) => nodeFs.close(fd, done),
    closeSync: (fd) => nodeFs.closeSync(fd),
  };
  return { fs, calls };
}

describe('the JSONL store makes a new log\'s directory entries durable', () => {
  const header = { kind: 'session/start', id: 's', cwd: '/w', model: 'm', depth: 0, parent: null, format: 1 } as const;

  it('fsyncs sessions/ (the new file) and $BRIDLE_HOME (the new sessions/) at the first flush, before it resolves, and only then', async () => {
    const home = realpathSync(tempDir('bridle-dirsync-'));
    const sessions = join(home, 'sessions');
    const log = join(sessions, 's.jsonl');
    const { fs, calls } = recordingFs();
    const r = new Recorder(createJsonlStore(log, { fs }), () => 0);
    r.append(header);
    await r.store.flush();
    // The file was opened beside the log and linked into place with its first line (ADR 0087): its descriptor is the log's.
    const aside = new RegExp(`^fdatasync ${log.replace(/[.]/g, '\\.')}\\.\\d+\\.\\d+\\.new$`);
    expect(calls).toEqual([expect.stringMatching(aside), `fsync ${sessions}`, `fsync ${home}`]);
    r.append({ kind: 'turn/start', turn: 't1', input: 'x' });
    await r.store.flush();
    await r.store.close();
    expect(calls.slice(3)).toEqual([expect.stringMatching(aside)]);
  });

  it('a log that already exists gains no directory entry: no directory is fsynced', async () => {
    const sessions = join(realpathSync(tempDir('bridle-dirsync-')), 'sessions');
    mkdirSync(sessions);
    const log = join(sessions, 's.jsonl');
    nodeFs.writeFileSync(log, '');
    const { fs, calls } = recordingFs();
    const r = new Recorder(createJsonlStore(log, { fs }), () => 0);
    r.append(header);
    await r.store.close();
    expect(calls).toEqual([`fdatasync ${log}`]);
  });

  it('a directory fsync that fails fails the flush (nothing is reported durable), and every later flush too (ADR 0017)', async () => {
    const home = realpathSync(tempDir('bridle-dirsync-'));
    const sessions = join(home, 'sessions');
    let broken = true;
    const { fs, calls } = recordingFs((p) => broken && p === sessions);
    const r = new Recorder(createJsonlStore(join(sessions, 's.jsonl'), { fs }), () => 0);
    r.append(header);
    await expect(r.flush()).rejects.toMatchObject({ name: 'LogNotDurableError', code: 'LOG_NOT_DURABLE', sysCode: 'EIO', upTo: 1 });
    broken = false;
    await expect(r.flush()).rejects.toMatchObject({ code: 'LOG_NOT_DURABLE' });
    expect(r.durableUpTo).toBe(0);
    expect(calls.filter((c) => c.startsWith('fsync'))).toEqual([`fsync ${sessions} failed`]);
    await expect(r.store.close()).rejects.toThrow('EIO');
  });
});

describe('the JSONL store when a save fails (ADR 0017)', () => {
  const header = { kind: 'session/start', id: 's', cwd: '/w', model: 'm', depth: 0, parent: null, format: 1 } as const;
  const newLog = () => join(realpathSync(tempDir('bridle-savefail-')), 's.jsonl');
  const eio = () => Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });

  it('a sync that failed is never followed by a flush that reports success (the dirty flag is not lost)', async () => {
    const log = newLog();
    nodeFs.writeFileSync(log, '');
    let syncs = 0;
    const fs: JsonlFs = { ...recordingFs().fs, fdatasync: (fd, done) => (++syncs === 1 ? done(eio()) : nodeFs.fdatasync(fd, done)) };
    const r = new Recorder(createJsonlStore(log, { fs }), () => 0);
    r.append(header);
    await expect(r.flush()).rejects.toMatchObject({ code: 'LOG_NOT_DURABLE', sysCode: 'EIO' });
    // Before: the flag was cleared before the sync and never restored, so this flush resolved without syncing.
    await expect(r.flush()).rejects.toMatchObject({ code: 'LOG_NOT_DURABLE' });
    r.append({ kind: 'turn/start', turn: 't1', input: 'x' });
    await expect(r.flush()).rejects.toMatchObject({ code: 'LOG_NOT_DURABLE' });
    expect(r.durableUpTo).toBe(0);
    // Appends still reach the file (best effort): the closing of a turn is written even if it cannot be saved.
    expect(parseLog(nodeFs.readFileSync(log, 'utf8')).entries.map((e) => e.kind)).toEqual(['session/start', 'turn/start']);
    await expect(r.store.close()).rejects.toThrow('EIO');
    // Closed all the same: the store takes nothing more.
    expect(() => r.append({ kind: 'turn/end', turn: 't1', reason: 'completed', steps: 0 })).toThrow(/closed/);
  });

  it('a line cut short by a full disk is cut back off the file, so the log stays whole for the next line', async () => {
    const log = newLog();
    nodeFs.writeFileSync(log, '');
    let full = false;
    const fs: JsonlFs = {
      ...recordingFs().fs,
      writeSync: (fd, buf, off) => {
        if (!full) return nodeFs.writeSync(fd, buf, off);
        if (off > 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        return nodeFs.writeSync(fd, buf, 0, 10);
      },
    };
    const r = new Recorder(createJsonlStore(log, { fs }), () => 0);
    r.append(header);
    full = true;
    expect(() => r.append({ kind: 'turn/start', turn: 't1', input: 'x'.repeat(100) })).toThrow(/ENOSPC/);
    full = false;
    r.append({ kind: 'turn/start', turn: 't1', input: 'y' });
    await r.store.close();
    const text = nodeFs.readFileSync(log, 'utf8');
    expect(parseLog(text).entries.map((e) => [e.seq, e.kind])).toEqual([[1, 'session/start'], [2, 'turn/start']]);
  });

  it('when the cut-short line cannot be removed either, no line is written after it', async () => {
    const log = newLog();
    nodeFs.writeFileSync(log, '');
    let full = false;
    const fs: JsonlFs = {
      ...recordingFs().fs,
      writeSync: (fd, buf, off) => {
        if (!full) return nodeFs.writeSync(fd, buf, off);
        if (off > 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        return nodeFs.writeSync(fd, buf, 0, 10);
      },
      ftruncateSync: () => {
        throw Object.assign(new Error('EIO: i/o error, ftruncate'), { code: 'EIO' });
      },
    };
    const r = new Recorder(createJsonlStore(log, { fs }), () => 0);
    r.append(header);
    full = true;
    expect(() => r.append({ kind: 'turn/start', turn: 't1', input: 'x'.repeat(100) })).toThrow(/ENOSPC/);
    full = false;
    expect(() => r.append({ kind: 'turn/start', turn: 't1', input: 'y' })).toThrow(/cut-off line/);
    await r.store.close();
    // A torn tail, which resume cuts off: never a good line after a bad one.
    const text = nodeFs.readFileSync(log, 'utf8');
    expect(text.split('\n').length).toBe(2);
    expect(text.endsWith('\n')).toBe(false);
  });
});

describe('a new JSONL log appears with its first line (ADR 0087)', () => {
  const header = { kind: 'session/start', id: 's', cwd: '/w', model: 'm', depth: 0, parent: null, format: 1 } as const;
  const fresh = () => {
    const dir = join(realpathSync(tempDir('bridle-first-line-')), 'sessions');
    return { dir, log: join(dir, 's.jsonl') };
  };

  it('until its first line there is no log (a kill there leaves nothing replay cannot read); then the log holds that line and nothing is left beside it', async () => {
    const { dir, log } = fresh();
    const store = createJsonlStore(log);
    expect(nodeFs.existsSync(log)).toBe(false);
    expect(nodeFs.readdirSync(dir).filter((f) => f.endsWith('.jsonl'))).toEqual([]);
    const r = new Recorder(store, () => 0);
    r.append(header);
    expect(nodeFs.readFileSync(log, 'utf8').split('\n')[0]).toContain('"session/start"');
    r.append({ kind: 'turn/start', turn: 't1', input: 'x' });
    await r.store.close();
    expect(nodeFs.readFileSync(log, 'utf8').trimEnd().split('\n')).toHaveLength(2);
    expect(nodeFs.readdirSync(dir)).toEqual(['s.jsonl']);
    expect(nodeFs.statSync(log).mode & 0o777).toBe(0o600);
  });

  it('a new log closed before its first line leaves no file at all', async () => {
    const { dir, log } = fresh();
    await createJsonlStore(log).close();
    expect(nodeFs.readdirSync(dir)).toEqual([]);
  });

  it('a log that appeared meanwhile is not replaced: the first append is refused and that log left as it was', () => {
    const { log } = fresh();
    const store = createJsonlStore(log);
    nodeFs.writeFileSync(log, 'theirs\n');
    expect(() => new Recorder(store, () => 0).append(header)).toThrow(/cannot create the log .*s\.jsonl: EEXIST/);
    expect(nodeFs.readFileSync(log, 'utf8')).toBe('theirs\n');
  });
});
