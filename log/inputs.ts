/**
 * Inputs in the log (ADR 0021): every input that reached a session is a
 * `session/input` entry, and whatever took it names it with `from` — the
 * `turn/start` of the turn it started, or the `user/message` that delivered
 * a steer or inject. An input no entry names is still queued: a resumed
 * session is handed it again, once.
 */
import type { Entry, EntryOf } from './entries.js';

/** Contract: pure and linear; the `session/input` entries no `turn/start` or `user/message` names, in log order. */
export function pendingInputs(entries: readonly Entry[]): EntryOf<'session/input'>[] {
  const taken = new Set<number>();
  for (const e of entries) if ((e.kind === 'turn/start' || e.kind === 'user/message') && e.from !== undefined) taken.add(e.from);
  return entries.filter((e): e is EntryOf<'session/input'> => e.kind === 'session/input' && !taken.has(e.seq));
}

/** The format a log was written in (its `session/start`), 0 when it has none. */
export const formatOf = (entries: readonly Entry[]): number => (entries[0]?.kind === 'session/start' ? entries[0].format : 0);
