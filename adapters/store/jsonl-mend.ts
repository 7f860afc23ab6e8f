/**
 * Mending a JSONL log's end before a repair appends (`SessionStore.open(id, { repair: true })`): a torn tail
 * is cut off at the last good newline (no good line is rewritten), a whole last line that lost its newline
 * gets one, each made durable.
 */
import { closeSync, fsyncSync, openSync, ftruncateSync, statSync, writeSync } from 'node:fs';
import { LogAccessError, LogAccessCode } from '../../log/errors.js';
import { readStoredLog } from './jsonl-read.js';

function openForRepair(path: string, flags: string): number {
  try {
    return openSync(path, flags);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LogAccessError(LogAccessCode.LOG_UNWRITABLE, `cannot repair ${path}: ${code ?? (err as Error).message}`, code);
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
export function endLine(path: string): void {
  const fd = openForRepair(path, 'a');
  try {
    writeSync(fd, '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * What `open(id, { mend: true })` does before a repair appends (`SessionStore.open`): a torn tail is cut off at
 * the last good newline, a whole last line that lost its newline gets one; nothing else changes. Contract: a
 * clean log is left as it was; throws `LogAccessError` when the file cannot be read or changed.
 */
export function mendTail(path: string): void {
  const { last } = readStoredLog(path);
  if (!last) return;
  // The parser's rule (`LogParser.end`): whole JSON is a line that lost its newline, anything else a torn tail.
  let whole = !last.undecodable;
  try {
    if (whole) JSON.parse(last.text);
  } catch {
    whole = false;
  }
  if (whole) endLine(path);
  else truncateLog(path, statSync(path).size - last.bytes);
}

