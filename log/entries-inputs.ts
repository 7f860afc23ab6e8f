/**
 * The entries that record what reached a session from outside (format 2,
 * ADR 0021): input, cancels, compaction requests, an end at rest, and a
 * process reopening the log. Each is logged, and flushed, before its sender
 * hears it was received. Part of the one `Entry` union in `entries.ts`.
 */
import { z } from 'zod';
import { envelope, Origin } from './entry-values.js';

/** How input is taken: its own turn (`followup`), the running turn's next step (`steer`), context for the next step (`inject`). */
export const InputMode = z.enum(['followup', 'steer', 'inject']);
export type InputMode = z.infer<typeof InputMode>;

/**
 * Input that reached the session (format 2, ADR 0021): logged, and flushed, before whoever sent it is told it
 * was received. A turn that takes it says so with `from` (its `turn/start`, or the `user/message` that
 * delivers a steer or inject); one that no entry names yet is queued, and a resume delivers it again.
 * `origin`: who sent it (`user`, or the harness: `system` for a plugin's advisory, `resume` for a resume note).
 */
export const SessionInput = z.strictObject({
  ...envelope,
  kind: z.literal('session/input'),
  mode: InputMode,
  text: z.string(),
  origin: Origin,
});

/** A cancel of the running turn or compaction, as it arrived (format 2); `by`: who asked (`user`, `parent`, a client). */
export const SessionCancel = z.strictObject({
  ...envelope,
  kind: z.literal('session/cancel'),
  by: z.string().min(1),
});

/** A request to compact now (between turns: right after the running one), as it arrived (format 2). */
export const SessionCompact = z.strictObject({
  ...envelope,
  kind: z.literal('session/compact'),
  by: z.string().min(1),
});

/**
 * The session was ended at rest (format 2): the running turn or compaction is cancelled and nothing queued
 * starts in this process. Queued input stays in the log, unconsumed: a resume delivers it.
 */
export const SessionEnd = z.strictObject({
  ...envelope,
  kind: z.literal('session/end'),
  by: z.string().min(1),
});

/**
 * A process opened the existing log to go on writing it (format 2): a resume, `run --session`, a server
 * serving a session its predecessor left. What it is handed first is the input the log holds queued.
 * Replay starts a segment here. `writer`: the process, when it holds the session's lock.
 */
export const SessionReopen = z.strictObject({
  ...envelope,
  kind: z.literal('session/reopen'),
  writer: z.strictObject({ pid: z.int().positive(), host: z.string() }).optional(),
});
