/**
 * The JSONL store: one entry per line, appended with synchronous writes (so a
 * line is in the file in seq order before `append` returns) and fsynced by
 * `flush` at the durability points.
 */
import { closeSync, fdatasync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LogStore } from '../../actors/ports.js';
import type { Entry } from '../../log/entries.js';
import { LogAccessError } from '../../log/errors.js';

/** Contract: throws `LogAccessError` (`LOG_UNWRITABLE`) when the log's directory or file cannot be created or opened for appending. */
export function createJsonlStore(path: string): LogStore {
  const unwritable = (what: string, err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code;
    return new LogAccessError('LOG_UNWRITABLE', `cannot ${what}: ${code ?? (err as Error).message}`, code);
  };
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  } catch (err) {
    throw unwritable(`create the log directory ${dirname(path)}`, err);
  }
  let fd: number;
  try {
    fd = openSync(path, 'a', 0o600);
  } catch (err) {
    throw unwritable(`create the log ${path}`, err);
  }
  let closed = false;
  let dirty = false;
  let inflight: Promise<void> | undefined;
  return {
    location: path,
    append(_entry: Entry, line: string) {
      if (closed) throw new Error(`log store ${path} is closed`);
      const buf = Buffer.from(line + '\n', 'utf8');
      let off = 0;
      while (off < buf.length) off += writeSync(fd, buf, off);
      dirty = true;
    },
    flush() {
      if (closed) return Promise.resolve();
      // Nothing new: the caller still must not hear "durable" before a sync already under way has finished.
      if (!dirty) return inflight ?? Promise.resolve();
      dirty = false;
      const sync = (inflight ?? Promise.resolve()).then(
        () => new Promise<void>((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve()))),
      );
      inflight = sync;
      void sync.then(
        () => {
          if (inflight === sync) inflight = undefined;
        },
        () => {
          if (inflight === sync) inflight = undefined;
        },
      );
      return sync;
    },
    async close() {
      if (closed) return;
      await this.flush();
      closed = true;
      closeSync(fd);
    },
  };
}
