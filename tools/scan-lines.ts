/**
 * Lines of an open file in bounded memory: a line is split on `\n` (a `\r`
 * before it is dropped) and only its head is ever held, however long it is.
 * A file of one 600 MiB line once became one string and killed the process.
 */
import type { FileHandle } from '../ports/fs.js';

const CHUNK_BYTES = 256 * 1024;
const NL = 0x0a;
const CR = 0x0d;

export interface LineVisitor {
  /** Line `n` (1-based) has begun: keep its text, only count it, or stop the scan before it. */
  start(n: number): 'keep' | 'count' | 'stop';
  /** A kept line ended: its first `maxChars` UTF-16 units and its whole length in UTF-16 units, line break left out. */
  kept(n: number, head: string, length: number): void;
}

export interface Scanned {
  /** Lines seen (the last one may lack its newline). */
  lines: number;
  /** True when `start` said stop: `lines` is then not the file's total. */
  stopped: boolean;
}

/**
 * Reads `handle` from offset 0 to its end (positioned reads through the fs
 * seam's handle, so a remote file scans the same way), feeding `visitor`.
 *
 * Contract: holds at most about `3 × maxChars` bytes of any one line (three
 * bytes of UTF-8 are at most one UTF-16 unit); rejects only for I/O errors or
 * an aborted `signal`.
 */
export async function scanLines(handle: FileHandle, maxChars: number, visitor: LineVisitor, signal?: AbortSignal): Promise<Scanned> {
  const keepMax = maxChars * 3 + 3;
    // BOMs stay, as Buffer#toString keeps them: lengths must agree with the kept text.
  const counter = new TextDecoder('utf-8', { ignoreBOM: true });
  let lines = 0;
  let mode: 'keep' | 'count' | undefined; // undefined: the next line has not begun
  let kept: Buffer[] = [];
  let keptBytes = 0;
  let lineBytes = 0;
  let units = 0;
  let lastByte = -1;

  const begin = (): boolean => {
    if (mode !== undefined) return true;
    const decided = visitor.start(lines + 1);
    if (decided === 'stop') return false;
    mode = decided;
    return true;
  };
  const take = (bytes: Uint8Array) => {
    lineBytes += bytes.length;
    lastByte = bytes[bytes.length - 1]!;
    if (mode !== 'keep') return;
    if (keptBytes < keepMax) {
      const part = Buffer.from(bytes.subarray(0, keepMax - keptBytes));
      kept.push(part);
      keptBytes += part.length;
    }
    units += counter.decode(bytes, { stream: true }).length;
  };
  const end = () => {
    lines++;
    if (mode === 'keep') {
      let length = units + counter.decode().length;
      let text = Buffer.concat(kept, keptBytes).toString('utf8');
      if (lastByte === CR) {
        length--;
        if (lineBytes <= keepMax) text = text.slice(0, -1);
      }
      visitor.kept(lines, text.length > maxChars ? text.slice(0, maxChars) : text, length);
    }
    mode = undefined;
    kept = [];
    keptBytes = lineBytes = units = 0;
    lastByte = -1;
  };

  for (let at = 0; ; ) {
    signal?.throwIfAborted();
    const view = await handle.read(at, CHUNK_BYTES);
    const bytesRead = view.length;
    if (bytesRead === 0) break;
    at += bytesRead;
    for (let from = 0; from < bytesRead; ) {
      if (!begin()) return { lines, stopped: true };
      const nl = view.indexOf(NL, from);
      const stop = nl === -1 ? bytesRead : nl;
      if (stop > from) take(view.subarray(from, stop));
      if (nl === -1) break;
      end();
      from = nl + 1;
    }
  }
  if (lineBytes > 0) end();
  return { lines, stopped: false };
}
