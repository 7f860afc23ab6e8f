/**
 * Crash repair of a JSONL log file: the file side of `log/repair.ts`. A torn
 * last line is cut off by truncating the file to its last good newline (no
 * good line is rewritten); the repair plan's drafts are then appended through
 * a recorder and fsynced.
 *
 * A crash during `delegate` leaves the children open too: each child named
 * by an open `subagent/start` has a log of its own beside the parent's, and
 * it is repaired first (its own children before it), so that a crash during
 * the repair itself leaves the parent open and the next repair finds every
 * child again.
 */
import { dirname, join } from 'node:path';
import type { Clock } from '../../log/clock.js';
import type { Draft, Entry } from '../../log/entries.js';
import { LogAccessError, LogCorruptError, SessionLockedError } from '../../log/errors.js';
import { LogParser, type ParsedLog } from '../../log/parse.js';
import { Recorder } from '../../log/recorder.js';
import { planRepair, type RepairReport } from '../../log/repair.js';
import type { Violation } from '../../log/verdict.js';
import { createJsonlStore } from './jsonl.js';
import { readLogStream } from './jsonl-read.js';
import { endLine, truncateLog } from './jsonl-mend.js';
import { acquireJsonlLock, hasLockFiles } from './jsonl-lock.js';
import type { WriterLock } from '../../ports/store.js';

export type FileRepair =
  | { ok: true; entries: Entry[]; appended: Entry[]; report: RepairReport; children: ChildRepair[] }
  | { ok: false; violations: Violation[] };

/** A child log the repair of its parent visited, and what became of it. */
export interface ChildRepair {
  child: string;
  path: string;
  /** `missing`: there is no log at `path` (nothing to repair); `refused`: the child log is corrupt or cannot be read, and was left as it was. */
  outcome: { kind: 'repaired'; repair: Extract<FileRepair, { ok: true }> } | { kind: 'missing' } | { kind: 'refused'; violations: Violation[] };
}

export type LogFileRead =
  | { ok: true; entries: Entry[]; torn?: ParsedLog['torn']; goodBytes: number; endsWithNewline: boolean }
  | { ok: false; violations: Violation[]; /** The entries before the bad line. */ entries: Entry[] };

/**
 * Reads and parses a log file, line by line; corruption becomes violations, a
 * torn tail is returned with the byte length of the good part.
 * Contract: throws only `LogAccessError` (not a regular file, unreadable).
 */
export function readLogFile(path: string): LogFileRead {
  const parser = new LogParser();
  try {
    const read = readLogStream(path, parser);
    const out = { ok: true as const, entries: read.entries, goodBytes: read.goodBytes, endsWithNewline: read.endsWithNewline };
    return read.torn ? { ...out, torn: read.torn } : out;
  } catch (err) {
    if (!(err instanceof LogCorruptError)) throw err;
    const v: Violation = { violation: err.violation, seq: err.seq ?? null, message: err.message };
    if (err.line !== undefined) v.line = err.line;
    return { ok: false, violations: [v], entries: parser.entries };
  }
}

/** A child's id names a file beside its parent's: one path segment, nothing that climbs out of the directory. */
const isPlainName = (id: string) => id.length > 0 && id !== '.' && id !== '..' && !/[/\\\0]/.test(id);

/**
 * Repairs the log at `path` in place, and first, the same way, the log of
 * every child an open `subagent/start` names (`<child>.jsonl` beside it).
 * Contract: refuses (ok: false, file untouched) a log with a defect before
 * its open end; otherwise, when it resolves, the file holds every good line
 * it held before, byte for byte, followed by the repair entries, fsynced. A
 * child that cannot be repaired is reported in `children`, never a reason to
 * leave the parent open. Running it on a clean log changes nothing. Throws
 * only `LogAccessError`, for `path` itself.
 * The caller holds the session's writer lock (`jsonl-lock.ts`); a child is
 * written only by its parent's process, so the parent's lock covers it.
 * `opts.first`: drafts appended before the repair's own, whatever it finds
 * (the `session/takeover` of a stale lock), and only if the log is not refused. `opts.keepPending`: a turn that
 * stopped waiting on an approval is left open for the session to go on with (ADR 0027; `planRepair`).
 */
export async function repairJsonlLog(path: string, clock: Clock, opts: { first?: readonly Draft[]; keepPending?: boolean } = {}, visiting: ReadonlySet<string> = new Set()): Promise<FileRepair> {
  const read = readLogFile(path);
  if (!read.ok) return { ok: false, violations: read.violations };
  const plan = planRepair(read.entries, { ...(read.torn ? { torn: read.torn } : {}), ...(opts.keepPending ? { keepPending: true } : {}) });
  if (!plan.ok) return plan;
  const children: ChildRepair[] = [];
  const seen = new Set([...visiting, path]);
  for (const child of [...plan.report.subagents, ...plan.report.linked, ...(plan.report.cancelled ?? [])]) children.push(await repairChild(dirname(path), child, clock, seen));
  if (read.torn) truncateLog(path, read.goodBytes);
  else if (!read.endsWithNewline) endLine(path);
  const drafts = [...(opts.first ?? []), ...plan.drafts];
  if (drafts.length === 0) return { ok: true, entries: read.entries, appended: [], report: plan.report, children };
  const store = createJsonlStore(path);
  const recorder = new Recorder(store, clock, read.entries);
  const appended = drafts.map((d) => recorder.append(d));
  await store.close();
  return { ok: true, entries: recorder.entries.slice(), appended, report: plan.report, children };
}

async function repairChild(dir: string, child: string, clock: Clock, seen: ReadonlySet<string>): Promise<ChildRepair> {
  const refused = (path: string, violation: string, message: string): ChildRepair => ({ child, path, outcome: { kind: 'refused', violations: [{ violation, seq: null, message }] } });
  if (!isPlainName(child)) return refused(dir, 'bad-child', `subagent/start names child ${JSON.stringify(child)}, which is not a log name beside its parent's`);
  const path = join(dir, `${child}.jsonl`);
  if (seen.has(path)) return refused(path, 'bad-child', `child ${child} is already being repaired higher up the tree (a log that names its own ancestor)`);
  // A lock the child's writer left (it died with its parent) is taken over for the repair and released after it, so
  // no stale lock stays beside a repaired log; a live one means someone writes the child: it is left alone.
  let lock: WriterLock | undefined;
  try {
    if (hasLockFiles(path)) lock = acquireJsonlLock(path);
  } catch (err) {
    if (err instanceof SessionLockedError) return refused(path, err.code, err.message);
    if (!(err instanceof LogAccessError)) throw err;
    return refused(path, err.code, err.message);
  }
  try {
    const r = await repairJsonlLog(path, clock, {}, seen);
    return { child, path, outcome: r.ok ? { kind: 'repaired', repair: r } : { kind: 'refused', violations: r.violations } };
  } catch (err) {
    if (!(err instanceof LogAccessError)) throw err;
    if (err.sysCode === 'ENOENT') return { child, path, outcome: { kind: 'missing' } };
    return refused(path, err.code, err.message);
  } finally {
    lock?.release();
  }
}
