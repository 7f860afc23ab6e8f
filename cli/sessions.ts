/**
 * `bridle sessions [--store <url|dir>] [--json]`: the sessions of a store, one
 * line each — id, state, owner, last seq, workspace. The owner is the writer
 * that holds the session now (a JSONL lock whose socket a live process listens on; a
 * Postgres lease that has not expired, by the database's clock); the state
 * comes from the log's last turn or session marker: `running` (a turn open
 * and an owner), `interrupted` (a turn open and no owner: its writer died,
 * `resume` or a server asked for it repairs it), `ended` (`session/end` last:
 * closed at rest), else `idle`. A reader: takes no claim, changes nothing.
 */
import { closeSync, existsSync, fstatSync, readdirSync, readSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { lockHoldersOf } from '../adapters/store/jsonl-lock.js';
import { openLogForReading } from '../adapters/store/jsonl-read.js';
import { LogAccessError } from '../log/errors.js';
import { createPostgresSessionStore, MARKER_LINE } from '../adapters/store/postgres.js';
import { isPostgresUrl, redactUrl } from '../adapters/store/postgres-pool.js';
import { bridleHome, sessionsDir } from './home.js';
import { UsageError } from './errors.js';
import { composeStoreRows } from './settings.js';
import { jsonLine, visible } from './visible.js';

export interface SessionsFlags {
  /** A postgres:// URL, or the JSONL directory (default `$BRIDLE_HOME/sessions`). */
  store?: string;
  json?: boolean;
}

export type SessionState = 'idle' | 'running' | 'interrupted' | 'ended';

export interface SessionLine {
  id: string;
  state: SessionState;
  /** The writer holding the session now, if any. */
  owner: { pid: number; host: string; since: string; epoch?: number; expires?: string } | null;
  lastSeq: number;
  cwd: string;
  model: string;
}

/** Contract: pure; the state a session is in from its last marker's kind and whether a writer holds it. */
export function stateOf(marker: string | undefined, owned: boolean): SessionState {
  if (marker === 'session/end') return 'ended';
  if (marker === 'turn/start') return owned ? 'running' : 'interrupted';
  return 'idle';
}

/**
 * A file of the store that was not listed as it claims, or at all: `LOG_NOT_A_FILE` (a FIFO, a directory, a
 * device named `*.jsonl`: refused without a blocking open), `LOG_UNREADABLE`, or `LOG_ID_MISMATCH` (the header
 * claims another id than the file's name; the session is listed by its file's name).
 */
export interface ListProblem {
  file: string;
  code: 'LOG_NOT_A_FILE' | 'LOG_UNREADABLE' | 'LOG_ID_MISMATCH';
  message: string;
}

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

function markerIn(lines: readonly string[]): string | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = MARKER_LINE.exec(lines[i]!);
    if (m) return m[1];
  }
  return undefined;
}

/**
 * The JSONL store's sessions: each `<id>.jsonl` in `dir` that is a regular file beginning with a `session/start`,
 * listed by its file's name. What could not be listed as it claims goes to `problems`.
 * Contract: never blocks on a file that is not a regular one (it is opened non-blocking and refused).
 */
export function listJsonl(dir: string, problems: ListProblem[] = []): SessionLine[] {
  if (!existsSync(dir)) return [];
  const out: SessionLine[] = [];
  const markers: (string | undefined)[] = [];
  const paths: string[] = [];
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.jsonl')).sort()) {
    const path = join(dir, name);
    const id = name.slice(0, -'.jsonl'.length);
    let fd: number;
    try {
      fd = openLogForReading(path);
    } catch (err) {
      if (err instanceof LogAccessError && err.code !== 'LOG_UNWRITABLE') problems.push({ file: name, code: err.code, message: err.message });
      continue;
    }
    let start: { kind?: string; id?: string; cwd?: string; model?: string } | undefined;
    let lines: string[];
    let marker: string | undefined;
    try {
      lines = lastLines(fd, TAIL_BYTES);
      start = JSON.parse(firstLine(fd)) as typeof start;
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
    out.push({ id, state: 'idle', owner: null, lastSeq, cwd: start.cwd ?? '', model: start.model ?? '' });
    markers.push(marker);
    paths.push(path);
  }
  // The owners at once: one probe for every lock's socket, not one per session.
  const owners = lockHoldersOf(paths);
  return out.map((line, i) => {
    const h = owners[i] ?? null;
    const owner = h ? { pid: h.pid, host: h.host, since: h.since } : null;
    return { ...line, owner, state: stateOf(markers[i], owner !== null) };
  });
}

function firstLine(fd: number): string {
  const buf = Buffer.alloc(64 * 1024);
  const n = readSync(fd, buf, 0, buf.length, 0);
  return buf.subarray(0, n).toString('utf8').split('\n', 1)[0]!;
}

export async function listStore(store: string | undefined): Promise<{ where: string; sessions: SessionLine[]; problems: ListProblem[] }> {
  if (store !== undefined && isPostgresUrl(store)) {
    const pg = createPostgresSessionStore({ url: store });
    const rows = await pg.list();
    return {
      where: redactUrl(store),
      sessions: rows.map((r) => ({ id: r.id, state: stateOf(r.marker, r.owner !== undefined), owner: r.owner ?? null, lastSeq: r.lastSeq, cwd: r.cwd, model: r.model })),
      problems: [],
    };
  }
  const dir = store !== undefined ? resolve(store) : sessionsDir(bridleHome());
  if (store !== undefined && !existsSync(dir)) throw new UsageError(`--store: no such directory: ${store}`);
  const problems: ListProblem[] = [];
  return { where: dir, sessions: listJsonl(dir, problems), problems };
}

const ownerText = (o: SessionLine['owner']) => (o ? `pid ${o.pid} on ${o.host}${o.epoch !== undefined ? ` (epoch ${o.epoch})` : ''}` : '-');

/**
 * The store `bridle sessions` lists: `--store`, else the `store` row composed as `run` composes it (a `store:`
 * in `$BRIDLE_HOME/config.yaml`, a profile's), else `$BRIDLE_HOME/sessions`.
 */
async function storeOf(flags: SessionsFlags): Promise<string | undefined> {
  if (flags.store !== undefined) return flags.store;
  const row = (await composeStoreRows({})).find((r) => r.id === 'store');
  const c = row?.config as { url?: string; dir?: string } | undefined;
  return row?.use === 'postgres' ? c?.url : row?.use === 'jsonl' ? c?.dir : undefined;
}

export async function sessionsCommand(flags: SessionsFlags, out: { write(s: string): unknown } = process.stdout): Promise<number> {
  const { where, sessions, problems } = await listStore(await storeOf(flags));
  if (flags.json) {
    out.write(`${jsonLine({ store: where, sessions, ...(problems.length > 0 ? { problems } : {}) })}\n`);
    return 0;
  }
  for (const p of problems) process.stderr.write(`bridle: ${p.code}: ${visible(p.message)}\n`);
  const widths = [Math.max(0, ...sessions.map((s) => s.id.length)), 11, Math.max(1, ...sessions.map((s) => ownerText(s.owner).length))];
  for (const s of sessions) {
    out.write(`${visible(s.id.padEnd(widths[0]!))}  ${s.state.padEnd(widths[1]!)}  ${visible(ownerText(s.owner).padEnd(widths[2]!))}  seq ${String(s.lastSeq).padStart(5)}  ${visible(s.cwd)}\n`);
  }
  if (sessions.length === 0) process.stderr.write(`no sessions in ${where}\n`);
  return 0;
}
