/**
 * Reading a JSONL log file as a stream of lines: fixed-size chunks, split on
 * `\n`, decoded as strict UTF-8. No whole-file string is ever built, so a log
 * is readable at any size (a single JS string stops near 512 MiB), and memory
 * beyond the parsed entries is one chunk plus the longest line.
 *
 * The file must be a regular file: it is opened non-blocking and checked
 * before the first read, so a FIFO or a directory named as a log is an error,
 * never a hang.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { TextDecoder } from 'node:util';
import { LogAccessError, LogCorruptError, LogAccessCode } from '../../log/errors.js';
import { LogParser, type ParsedLog } from '../../log/parse.js';
import type { StoredLog } from '../../ports/store.js';
import type { Violation } from '../../log/verdict.js';

/** Fills `buf` from its start with the next bytes; 0 at the end. */
export type ByteSource = (buf: Buffer) => number;

export interface LineReadOptions {
  /** Bytes read at a time (default 64 KiB). */
  chunkBytes?: number;
  /** A longer line is refused as `line-too-long` (default 256 MiB: no entry bridle writes comes near it). */
  maxLineBytes?: number;
}

export interface LinesRead {
  /** Bytes read in all. */
  bytes: number;
  /** What follows the last `\n`, when the source does not end with one. */
  last?: { text: string; bytes: number; undecodable: boolean };
  /** The most bytes the reader held at once (its chunk buffer plus a line carried over): for tests of the memory bound. */
  peakHeldBytes: number;
}

const NL = 10;
const DEFAULT_CHUNK = 64 * 1024;
const DEFAULT_MAX_LINE = 256 * 1024 * 1024;

/** Passes on the lines of regions of whole lines, counting them so that an error names its line. */
interface LineEmitter {
  /** Every line of `region` (which ends just before a `\n`), in order. */
  emit(region: Uint8Array): void;
  /** The 1-based number of the next line. */
  next(): number;
}

function lineEmitter(strict: TextDecoder, onLine: (text: string) => void): LineEmitter {
  let lines = 0;
  // The slow path, for a region that does not decode: the lines before the bad one still go out first, in file order.
  const emitEachUntilBad = (region: Uint8Array) => {
    for (let from = 0; ; ) {
      const nl = region.indexOf(NL, from);
      const end = nl < 0 ? region.length : nl;
      let text: string;
      try {
        text = strict.decode(region.subarray(from, end));
      } catch {
        throw new LogCorruptError('bad-utf8', `line ${lines + 1}: not valid UTF-8`, lines + 1);
      }
      lines++;
      onLine(text);
      if (nl < 0) return;
      from = nl + 1;
    }
  };
  return {
    emit(region) {
      let text: string;
      try {
        text = strict.decode(region);
      } catch {
        return emitEachUntilBad(region);
      }
      let from = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
        lines++;
        onLine(text.slice(from, nl));
        from = nl + 1;
      }
      lines++;
      onLine(text.slice(from));
    },
    next: () => lines + 1,
  };
}

const tooLong = (line: number, maxLine: number) => new LogCorruptError('line-too-long', `line ${line}: longer than ${maxLine} bytes`, line);

/** The bytes after the last `\n`, decoded. */
function lastLine(strict: TextDecoder, rest: Buffer): NonNullable<LinesRead['last']> {
  try {
    return { text: strict.decode(rest), bytes: rest.length, undecodable: false };
  } catch {
    // A crash can cut a write inside a character: the last line is torn, not corrupt.
    return { text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(rest), bytes: rest.length, undecodable: true };
  }
}

/**
 * Calls `onLine` with every `\n`-terminated line, in order, without its `\n`.
 * Contract: throws `LogCorruptError` (`bad-utf8`, `line-too-long`) naming the
 * 1-based line; whatever `onLine` throws passes through; the bytes after the
 * last `\n` are returned, never passed to `onLine`.
 */
export function readLines(source: ByteSource, onLine: (text: string) => void, opts: LineReadOptions = {}): LinesRead {
  const chunk = Buffer.allocUnsafe(opts.chunkBytes ?? DEFAULT_CHUNK);
  const maxLine = opts.maxLineBytes ?? DEFAULT_MAX_LINE;
  const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const out = lineEmitter(strict, onLine);
  let carry: Buffer[] = [];
  let carried = 0;
  let bytes = 0;
  let peak = chunk.length;

  for (;;) {
    const n = source(chunk);
    if (n <= 0) break;
    bytes += n;
    const lastNl = chunk.lastIndexOf(NL, n - 1);
    if (lastNl < 0) {
      carry.push(Buffer.from(chunk.subarray(0, n)));
      carried += n;
      if (carried > maxLine) throw tooLong(out.next(), maxLine);
      peak = Math.max(peak, chunk.length + carried);
      continue;
    }
    let from = 0;
    if (carried) {
      // The line that began in an earlier chunk ends here: only it is copied, the rest is decoded in place.
      const firstNl = chunk.indexOf(NL);
      if (carried + firstNl > maxLine) throw tooLong(out.next(), maxLine);
      peak = Math.max(peak, chunk.length + 2 * carried + firstNl);
      out.emit(Buffer.concat([...carry, chunk.subarray(0, firstNl)]));
      from = firstNl + 1;
    }
    if (from <= lastNl) out.emit(chunk.subarray(from, lastNl));
    carry = lastNl + 1 < n ? [Buffer.from(chunk.subarray(lastNl + 1, n))] : [];
    carried = n - lastNl - 1;
  }
  if (carried === 0) return { bytes, peakHeldBytes: peak };
  return { bytes, last: lastLine(strict, Buffer.concat(carry)), peakHeldBytes: peak };
}

const kindOf = (s: Stats) =>
  s.isDirectory() ? 'a directory' : s.isFIFO() ? 'a FIFO' : s.isSocket() ? 'a socket' : s.isCharacterDevice() || s.isBlockDevice() ? 'a device' : 'not a regular file';

/**
 * Opens a log for reading, refusing anything but a regular file before a byte is read.
 * Contract: throws `LogAccessError` (`LOG_NOT_A_FILE`, `LOG_UNREADABLE`); never blocks on a FIFO.
 */
export function openLogForReading(path: string): number {
  let fd: number;
  try {
    // Non-blocking, so that opening a FIFO returns at once instead of waiting for a writer.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LogAccessError(LogAccessCode.LOG_UNREADABLE, `cannot read ${path}: ${code ?? (err as Error).message}`, code);
  }
  const st = fstatSync(fd);
  if (!st.isFile()) {
    closeSync(fd);
    throw new LogAccessError(LogAccessCode.LOG_NOT_A_FILE, `${path} is ${kindOf(st)}, not a session log`);
  }
  return fd;
}

export interface LogFileRead extends ParsedLog {
  /** Bytes of the file that hold whole lines: everything but a torn tail. */
  goodBytes: number;
  /** Whether the last byte is `\n` (an empty file counts as ending cleanly). */
  endsWithNewline: boolean;
}

/**
 * Streams the log at `path` through `parser`.
 * Contract: throws `LogAccessError` for a path that is not a readable regular
 * file and `LogCorruptError` for a bad line (`parser.entries` then holds the
 * entries before it); never holds the whole file.
 */
export function readLogStream(path: string, parser: LogParser = new LogParser(), opts: LineReadOptions = {}): LogFileRead {
  const fd = openLogForReading(path);
  try {
    const read = readLines(fromFd(fd, path), (l) => parser.line(l), opts);
    const parsed = parser.end(read.last);
    const goodBytes = parsed.torn ? read.bytes - read.last!.bytes : read.bytes;
    return { ...parsed, goodBytes, endsWithNewline: read.last === undefined };
  } finally {
    closeSync(fd);
  }
}

function fromFd(fd: number, path: string): ByteSource {
  return (buf) => {
    try {
      return readSync(fd, buf, 0, buf.length, null);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new LogAccessError(LogAccessCode.LOG_UNREADABLE, `cannot read ${path}: ${code ?? (err as Error).message}`, code);
    }
  };
}

/**
 * The whole lines of the log at `path`, each without its `\n`, as written (a torn last line left out).
 * Contract: throws `LogAccessError` as `readLogStream`, `LogCorruptError` for a line that is not UTF-8.
 */
export function readLogLines(path: string, opts: LineReadOptions = {}): string[] {
  const fd = openLogForReading(path);
  try {
    const out: string[] = [];
    readLines(fromFd(fd, path), (l) => out.push(l), opts);
    return out;
  } finally {
    closeSync(fd);
  }
}

/**
 * The log at `path` as the store port reads it (`StoredLog`): its whole lines, and the bytes after the last
 * newline when it does not end with one. Contract: throws `LogAccessError` as `readLogStream`,
 * `LogCorruptError` for a whole line that is not UTF-8.
 */
export function readStoredLog(path: string, opts: LineReadOptions = {}): StoredLog {
  const fd = openLogForReading(path);
  try {
    const lines: string[] = [];
    const read = readLines(fromFd(fd, path), (l) => lines.push(l), opts);
    return read.last ? { location: path, lines, last: read.last } : { location: path, lines };
  } finally {
    closeSync(fd);
  }
}

/**
 * The first line of the log at `path`, parsed, from one small read (a directory of large logs is scanned
 * cheaply). Contract: never throws; undefined when it is not a regular readable file whose first line is a JSON object.
 */
export function readLogHeader(path: string): Record<string, unknown> | undefined {
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

/** A log file read and parsed, or the violation of its first bad line (`readLogFile`). */
export type CheckedLogFile =
  | { ok: true; entries: ParsedLog['entries']; torn?: ParsedLog['torn']; goodBytes: number; endsWithNewline: boolean }
  | { ok: false; violations: Violation[]; /** The entries before the bad line. */ entries: ParsedLog['entries'] };

/**
 * Reads and parses a log file, line by line; corruption becomes violations, a torn tail is returned with the
 * byte length of the good part. Contract: throws only `LogAccessError` (not a regular file, unreadable).
 */
export function readLogFile(path: string): CheckedLogFile {
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
