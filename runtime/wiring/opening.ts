/**
 * What a session writes as it starts, before anything queued runs: a new log's
 * `session/start`; for a log it goes on with, the opening the opener drafted
 * (`session/reopen`, a takeover, a policy change) and what loading it found to
 * close. Split from the start itself so a log that cannot be continued is
 * refused at `createSession`, before anyone subscribed.
 */
import type { Draft, Entry } from '../../log/entries.js';
import { LOG_FORMAT, type SessionLoop, type SessionPolicy } from '../../log/entries-session.js';
import { LogFormatError } from '../../log/errors.js';
import { formatOf } from '../../log/inputs.js';
import { closeOrphanCompaction, findOrphanCompaction } from '../../log/context/orphan.js';
import type { Recorder } from '../../log/recorder.js';
import { sessionConfig, type Configured } from '../session-config.js';

export interface Header {
  id: string;
  cwd: string;
  modelName: string;
  depth: number;
  parent: string | null;
  /** What `session/start` records of the settings (only what was set). */
  configured: Configured;
  /** What the session may do without asking, as `session/start` records it (ADR 0027). */
  policy?: SessionPolicy;
  /** The W3C trace context the session's spans hang under (ADR 0055). */
  traceparent?: string;
  /** The loop that runs, when a row replaced bridle's own (ADR 0085): `session/start`'s `loop`. */
  ranLoop?: SessionLoop;
  /** Appended first when the log goes on (a writer's `session/reopen`, `session/takeover`, `session/policy`). */
  opening?: readonly Draft[];
}

/** Contract: pure; throws `LogFormatError` for a log older than this format (it has no inputs in it, ADR 0021). */
export function checkContinuable(existing: readonly Entry[]): void {
  if (existing.length > 0 && formatOf(existing) < LOG_FORMAT) throw new LogFormatError(formatOf(existing), LOG_FORMAT, 'continuing it');
}

/** Contract: appends through `recorder` only; throws what the store throws for the first append that fails. */
export function appendOpening(recorder: Recorder, h: Header): void {
  if (recorder.entries.length === 0) {
    recorder.append({ kind: 'session/start', id: h.id, cwd: h.cwd, model: h.modelName, depth: h.depth, parent: h.parent, format: LOG_FORMAT, ...sessionConfig(h.configured), ...(h.ranLoop ? { loop: h.ranLoop } : {}), ...(h.policy ? { policy: h.policy } : {}), ...(h.traceparent ? { traceparent: h.traceparent } : {}) });
  }
  // Going on with a log is said first (`session/reopen`, a takeover), then what loading it found to close.
  for (const d of h.opening ?? []) recorder.append(d);
  // A compaction a crash left open between turns is closed on load (I9); inside an open turn it is repair's to close.
  const all = recorder.entries;
  if (findOrphanCompaction(all) && all.findLastIndex((e) => e.kind === 'turn/start') <= all.findLastIndex((e) => e.kind === 'turn/end')) {
    for (const d of closeOrphanCompaction(all)) recorder.append(d);
  }
}
