/**
 * A session's forks in a JSONL directory (ADR 0029): the logs whose header
 * names it in `forkOf`. Each log's first line alone is read, so a directory
 * of large logs is scanned in one small read per file.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ForkRef } from '../../ports/store.js';
import { readLogHeader } from './jsonl-read.js';

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
    const h = readLogHeader(join(dir, n));
    const of = h?.kind === 'session/start' ? (h.forkOf as { session?: unknown; seq?: unknown } | undefined) : undefined;
    if (of?.session === id && typeof of.seq === 'number' && typeof h!.id === 'string') out.push({ id: h!.id, seq: of.seq, location: join(dir, n) });
  }
  return out.sort((a, b) => a.seq - b.seq || a.id.localeCompare(b.id));
}
