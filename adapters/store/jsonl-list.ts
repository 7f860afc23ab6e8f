/**
 * The JSONL store's listing (`SessionStore.list`): each `<id>.jsonl` of its directory that is a regular file
 * beginning with a `session/start`, listed by its file's name, with the writer that holds it now (its lock's
 * socket, all probed at once) and the kind of its last marker entry. A reader: takes no claim, changes nothing.
 */
import { closeSync, existsSync, fstatSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { LogAccessError, LogAccessCode } from '../../log/errors.js';
import { markerIn } from '../../log/markers.js';
import type { ListProblem, StoredSession } from '../../ports/store.js';
import { lockHoldersOf } from './jsonl-lock.js';
import { openLogForReading } from './jsonl-read.js';
import { listedExtras } from './listed.js';

/** The last bytes of a log hold its last marker, nearly always; the whole file is read only when they do not. */
const TAIL_BYTES = 256 * 1024;

/** The bytes of `fd` from `from` to its end, as text. */
function readFrom(fd: number, from: number): string {
  const size = fstatSync(fd).size;
  const buf = Buffer.alloc(Math.max(0, size - from));
  let off = 0;
  while (off < buf.length) {
    const n = readSync(fd, buf, off, buf.length - off, from + off);
    if (n <= 0) break;
    off += n;
  }
  return buf.subarray(0, off).toString('utf8');
}

function lastLines(fd: number, bytes: number): string[] {
  const from = Math.max(0, fstatSync(fd).size - bytes);
  const lines = readFrom(fd, from).split('\n');
  // A first line cut by the window is not whole.
  return from > 0 ? lines.slice(1) : lines;
}

/** The whole lines of the log's first 64 KiB: its header, and the first input a title is taken from. */
function firstLines(fd: number): string[] {
  const buf = Buffer.alloc(64 * 1024);
  const n = readSync(fd, buf, 0, buf.length, 0);
  const lines = buf.subarray(0, n).toString('utf8').split('\n');
  return n === buf.length ? lines.slice(0, -1) : lines;
}

/**
 * Contract: never blocks on a file that is not a regular one (it is opened non-blocking and refused); what could
 * not be listed as it claims goes to `problems`; a directory that is not there lists nothing.
 */
export function listJsonl(dir: string): { sessions: StoredSession[]; problems: ListProblem[] } {
  const problems: ListProblem[] = [];
  if (!existsSync(dir)) return { sessions: [], problems };
  const out: StoredSession[] = [];
  const paths: string[] = [];
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.jsonl')).sort()) {
    const path = join(dir, name);
    const id = name.slice(0, -'.jsonl'.length);
    let fd: number;
    try {
      fd = openLogForReading(path);
    } catch (err) {
      if (err instanceof LogAccessError && err.code !== LogAccessCode.LOG_UNWRITABLE) problems.push({ file: name, code: err.code, message: err.message });
      continue;
    }
    let start: { kind?: string; id?: string; cwd?: string; model?: string } | undefined;
    let lines: string[];
    let head: string[];
    let marker: string | undefined;
    try {
      lines = lastLines(fd, TAIL_BYTES);
      head = firstLines(fd);
      start = JSON.parse(head[0] ?? '') as typeof start;
      if (start?.kind !== 'session/start' || typeof start.id !== 'string') continue;
      marker = markerIn(lines) ?? markerIn(readFrom(fd, 0).split('\n'));
    } catch {
      continue;
    } finally {
      closeSync(fd);
    }
    if (start.id !== id) problems.push({ file: name, code: 'LOG_ID_MISMATCH', message: `${path}: its header claims the id ${JSON.stringify(start.id)}; listed as ${JSON.stringify(id)}, its file's name` });
    const whole = lines.filter((l) => l.trim() !== '');
    const lastSeq = Number(/^\{"seq":([0-9]+),/.exec(whole.at(-1) ?? '')?.[1] ?? 0);
    out.push({ id, lastSeq, cwd: start.cwd ?? '', model: start.model ?? '', ...(marker ? { marker } : {}), ...listedExtras(head, whole) });
    paths.push(path);
  }
  // The owners at once: one probe for every lock's socket, not one per session.
  const owners = lockHoldersOf(paths);
  const sessions = out.map((s, i) => {
    const h = owners[i];
    return h ? { ...s, owner: { pid: h.pid, host: h.host, since: h.since } } : s;
  });
  return { sessions, problems };
}
