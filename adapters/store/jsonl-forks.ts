/**
 * A session's forks in a JSONL directory (ADR 0029): the logs whose header
 * names it in `forkOf`. Each log's first line alone is read, so a directory
 * of large logs is scanned in one small read per file.
 */
import { closeSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { openLogForReading } from './jsonl-read.js';

export interface ForkRef {
  id: string;
  /** The original's last seq the fork shares. */
  seq: number;
  /** The fork's log. */
  location: string;
}

/** The first line of the log at `path`, parsed; undefined when it is not a readable JSON object. */
function header(path: string): Record<string, unknown> | undefined {
  let fd: number;
  try {
    fd = openLogForReading(path);
  } catch {
    return undefined;
  }
  try {
    const buf = Buffer.alloc(64 * 1024);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const v: unknown = JSON.parse(buf.subarray(0, n).toString('utf8').split('\n', 1)[0]!);
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Contract: never throws; the forks of session `id` among the logs of `dir`, by fork point then id (none when `dir` cannot be read). */
export function forksIn(dir: string, id: string): ForkRef[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.jsonl'));
  } catch {
    return [];
  }
  const out: ForkRef[] = [];
  for (const n of names) {
    const h = header(join(dir, n));
    const of = h?.kind === 'session/start' ? (h.forkOf as { session?: unknown; seq?: unknown } | undefined) : undefined;
    if (of?.session === id && typeof of.seq === 'number' && typeof h!.id === 'string') out.push({ id: h!.id, seq: of.seq, location: join(dir, n) });
  }
  return out.sort((a, b) => a.seq - b.seq || a.id.localeCompare(b.id));
}
