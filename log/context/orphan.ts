/**
 * An unmatched `compaction/start` — the process died between the brackets —
 * is a detectable orphan (I9). Closing it adds entries, never removes any: a
 * `repair` note and the missing `compaction/end`. A summary logged before the
 * crash stays: it is a complete, ordinary replacement.
 */
import { deriveMessages } from '../derive-messages.js';
import type { Draft, Entry, EntryOf } from '../entries.js';
import { estimateRequestTokens } from './tokens.js';

/**
 * Contract: pure; every `compaction/start` not closed by a `compaction/end`
 * before the next start (or the end of the log), in log order.
 */
export function findOrphanCompactions(entries: readonly Entry[]): EntryOf<'compaction/start'>[] {
  const orphans: EntryOf<'compaction/start'>[] = [];
  let open: EntryOf<'compaction/start'> | undefined;
  for (const e of entries) {
    if (e.kind === 'compaction/start') {
      if (open) orphans.push(open);
      open = e;
    } else if (e.kind === 'compaction/end') open = undefined;
  }
  if (open) orphans.push(open);
  return orphans;
}

/** Contract: pure; the trailing open `compaction/start` (the one a crash leaves), if any. */
export function findOrphanCompaction(entries: readonly Entry[]): EntryOf<'compaction/start'> | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.kind === 'compaction/end') return undefined;
    if (e.kind === 'compaction/start') return e;
  }
  return undefined;
}

/**
 * Contract: pure; `[]` when there is no orphan, else the drafts that close it
 * (append them in order). `tokensAfter` is the estimate of the projection as
 * the log now stands, under the newest request header.
 */
export function closeOrphanCompaction(entries: readonly Entry[]): Draft[] {
  const start = findOrphanCompaction(entries);
  if (!start) return [];
  let header: EntryOf<'request/header'> | undefined;
  for (let i = entries.length - 1; i >= 0 && !header; i--) if (entries[i]!.kind === 'request/header') header = entries[i] as EntryOf<'request/header'>;
  const tokensAfter = estimateRequestTokens({ system: header?.system ?? '', tools: header?.tools ?? [], messages: deriveMessages(entries) });
  return [
    { kind: 'repair', found: 'orphan-compaction', detail: `compaction/start at seq ${start.seq} had no compaction/end; closed as interrupted` },
    { kind: 'compaction/end', outcome: 'interrupted', tokensBefore: start.estimatedTokens, tokensAfter },
  ];
}
