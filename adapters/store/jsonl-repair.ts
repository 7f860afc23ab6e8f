/**
 * Crash repair of a JSONL log file: the file side of `log/repair.ts`. A torn
 * last line is cut off by truncating the file to its last good newline (no
 * good line is rewritten); the repair plan's drafts are then appended through
 * a recorder and fsynced.

 */
import { closeSync, fsyncSync, openSync, ftruncateSync, writeSync } from 'node:fs';
import type { Clock } from '../../actors/ports.js';
import type { Entry } from '../../log/entries.js';
import { LogAccessError, LogCorruptError } from '../../log/errors.js';
import { LogParser, type ParsedLog } from '../../log/parse.js';
import { Recorder } from '../../log/recorder.js';
import { planRepair, type RepairReport } from '../../log/repair.js';
import type { Violation } from '../../log/verify.js';
import { createJsonlStore } from './jsonl.js';
import { readLogStream } from './jsonl-read.js';

export type FileRepair =
  | { ok: true; entries: Entry[]; appended: Entry[]; report: RepairReport }
  | { ok: false; violations: Violation[] };

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

function openForRepair(path: string, flags: string): number {
  try {
    return openSync(path, flags);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LogAccessError('LOG_UNWRITABLE', `cannot repair ${path}: ${code ?? (err as Error).message}`, code);
  }
}

/** Cuts the file to `bytes` and makes the cut durable. */
export function truncateLog(path: string, bytes: number): void {
  const fd = openForRepair(path, 'r+');
  try {
    ftruncateSync(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** A last line that is whole JSON but lacks its newline gets one, so the next append starts a line of its own. */
function endLine(path: string): void {
  const fd = openForRepair(path, 'a');
  try {
    writeSync(fd, '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Repairs the log at `path` in place.
 * Contract: refuses (ok: false, file untouched) a log with a defect before
 * its open end; otherwise, when it resolves, the file holds every good line
 * it held before, byte for byte, followed by the repair entries, fsynced.
 * Running it on a clean log changes nothing. Throws only `LogAccessError`.
 */
export async function repairJsonlLog(path: string, clock: Clock): Promise<FileRepair> {
  const read = readLogFile(path);
  if (!read.ok) return { ok: false, violations: read.violations };
  const plan = planRepair(read.entries, read.torn ? { torn: read.torn } : {});
  if (!plan.ok) return plan;
  if (read.torn) truncateLog(path, read.goodBytes);
  else if (!read.endsWithNewline) endLine(path);
  if (plan.drafts.length === 0) return { ok: true, entries: read.entries, appended: [], report: plan.report };
  const store = createJsonlStore(path);
  const recorder = new Recorder(store, clock, read.entries);
  const appended = plan.drafts.map((d) => recorder.append(d));
  await store.close();
  return { ok: true, entries: recorder.entries.slice(), appended, report: plan.report };
}
