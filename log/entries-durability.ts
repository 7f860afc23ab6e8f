/**
 * The entries that say how the log itself fared (ADR 0017): what a crash
 * repair found, a save that failed, and a writer that took over from one
 * that is gone. Part of the one `Entry` union in `entries.ts`.
 */
import { z } from 'zod';
import { envelope } from './entry-values.js';

/**
 * What a repair found: `torn-tail` (a cut last line), `open-turn` (a crash left a turn open), `orphan-compaction`
 * (a compaction/start without its end), `turn-fault` (a live append failed and the harness closed the turn).
 */
export const RepairFound = z.enum(['torn-tail', 'open-turn', 'orphan-compaction', 'turn-fault']);
export type RepairFound = z.infer<typeof RepairFound>;

export const Repair = z.strictObject({
  ...envelope,
  kind: z.literal('repair'),
  found: RepairFound,
  /** For people; code reads the structured fields. */
  detail: z.string(),
  /** `torn-tail` (format 2): the 1-based line that was cut, and its length in bytes. */
  line: z.int().positive().optional(),
  bytes: z.int().nonnegative().optional(),
});

/**
 * A flush that failed (ADR 0017): the entries up to `upTo` were written but the store could not make them
 * durable. Written by the harness right after the failure, so a reader (and replay) knows which save failed;
 * what follows is as unsaved as what it covers. `detail` is the store's message, `sysCode` the system's code.
 */
export const LogNotDurable = z.strictObject({
  ...envelope,
  kind: z.literal('log/not-durable'),
  upTo: z.int().positive(),
  detail: z.string(),
  sysCode: z.string().optional(),
  /** The flush was the save of this `session/input` (format 2): its sender was told it was not received (ADR 0021). */
  input: z.int().positive().optional(),
});

/** A writer's claim on a session (a JSONL lock file, later a lease): its process, host and since when. */
export const WriterClaim = z.strictObject({ pid: z.int().positive(), host: z.string(), since: z.string() });

/**
 * A new writer took over the session from one that is gone (its lock named a dead process on this host),
 * ADR 0017. Marked `ignorable`: it explains, and a reader that does not know it loses nothing.
 */
export const SessionTakeover = z.strictObject({
  ...envelope,
  kind: z.literal('session/takeover'),
  stale: WriterClaim,
  by: z.strictObject({ pid: z.int().positive(), host: z.string() }),
});
