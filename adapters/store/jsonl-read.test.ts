import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LogAccessError, LogCorruptError } from '../../log/errors.js';
import { LogBuilder, logText } from '../../test/helpers/log-builder.js';
import { readLines, readLogFile, readLogStream, type ByteSource } from './jsonl-read.js';
import { tempDir } from '../../test/helpers/temp.js';

/** A source that hands out `bytes` in pieces of at most `piece` bytes, as a slow pipe would. */
function sourceOf(bytes: Buffer, piece = Infinity): ByteSource {
  let at = 0;
  return (buf) => {
    const n = Math.min(buf.length, piece, bytes.length - at);
    bytes.copy(buf, 0, at, at + n);
    at += n;
    return n;
  };
}

function collect(bytes: Buffer, chunkBytes: number, piece?: number) {
  const lines: string[] = [];
  const read = readLines(sourceOf(bytes, piece), (l) => lines.push(l), { chunkBytes });
  return { lines, read };
}

let dir: string;
beforeEach(() => {
  dir = tempDir('bridle-read-');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('readLines (a log as a stream of lines)', () => {
  const text = 'first\nsecond: hé 🙂 ✓\n\nfourth, a longer line that spans several tiny chunks\nlast, no newline 🙂';

  it('splits on LF across any chunk boundary, characters cut between chunks included, and hands back the unterminated last line', () => {
    const bytes = Buffer.from(text, 'utf8');
    for (const chunk of [1, 2, 3, 5, 7, 64, 1 << 16]) {
      for (const piece of [1, 3, Infinity]) {
        const { lines, read } = collect(bytes, chunk, piece);
        expect(lines, `chunk ${chunk}, piece ${piece}`).toEqual(text.split('\n').slice(0, -1));
        expect(read.last).toEqual({ text: 'last, no newline 🙂', bytes: Buffer.byteLength('last, no newline 🙂'), undecodable: false });
        expect(read.bytes).toBe(bytes.length);
      }
    }
    expect(collect(Buffer.from('a\nb\n'), 3).read.last).toBeUndefined();
  });

  it('invalid UTF-8 inside a line is bad-utf8 naming that line, not a silent U+FFFD', () => {
    const bytes = Buffer.concat([Buffer.from('{"a":1}\n{"b":"x'), Buffer.from([0xff, 0xfe]), Buffer.from('y"}\n{"c":3}\n')]);
    for (const chunk of [1, 4, 1 << 16]) {
      let caught: unknown;
      try {
        collect(bytes, chunk);
      } catch (err) {
        caught = err;
      }
      expect(caught, `chunk ${chunk}`).toBeInstanceOf(LogCorruptError);
      expect(caught).toMatchObject({ violation: 'bad-utf8', line: 2 });
    }
    // An overlong encoding and a lone surrogate are just as invalid.
    expect(() => collect(Buffer.from([0x7b, 0xc0, 0xaf, 0x7d, 0x0a]), 1 << 16)).toThrow(/line 1: not valid UTF-8/);
    expect(() => collect(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22, 0x0a]), 1 << 16)).toThrow(/line 1: not valid UTF-8/);
  });

  it('a last line cut inside a character is torn (undecodable), not corrupt', () => {
    const smile = Buffer.from('🙂');
    const { read } = collect(Buffer.concat([Buffer.from('{"a":1}\n{"b":"'), smile.subarray(0, 2)]), 4);
    expect(read.last).toMatchObject({ bytes: 8, undecodable: true });
  });

  it('holds one chunk plus the longest line, however long the stream (a generated 600 MiB: past the largest JS string)', () => {
    const line = Buffer.from(`${JSON.stringify({ seq: 1, pad: 'x'.repeat(1000) })}\n`);
    const total = 600 * 1024 * 1024;
    let sent = 0;
    // Lines are written whole into each read; a line may still straddle two reads.
    const source: ByteSource = (buf) => {
      let n = 0;
      while (sent < total && n < buf.length) {
        const k = Math.min(line.length - (sent % line.length), buf.length - n);
        line.copy(buf, n, sent % line.length, (sent % line.length) + k);
        n += k;
        sent += k;
      }
      return n;
    };
    let count = 0;
    const read = readLines(source, (l) => {
      if (l.length !== line.length - 1) throw new Error(`line ${count + 1} is ${l.length} chars`);
      count++;
    });
    expect(read.bytes).toBe(total);
    expect(count).toBe(Math.floor(total / line.length));
    expect(read.peakHeldBytes).toBeLessThan(64 * 1024 + 3 * line.length);
  }, 60_000);

  it('refuses a line longer than the limit as line-too-long instead of growing without bound', () => {
    const long = Buffer.from(`${'x'.repeat(5000)}\n`);
    expect(() => readLines(sourceOf(long), () => {}, { chunkBytes: 256, maxLineBytes: 4096 })).toThrow(expect.objectContaining({ violation: 'line-too-long', line: 1 }));
  });
});

describe('readLogFile over a real file', () => {
  it('a byte-order mark is not silently dropped: the first line is not JSON', () => {
    const file = path.join(dir, 'bom.jsonl');
    fs.writeFileSync(file, `\ufeff${logText(new LogBuilder().cleanTurn().entries)}`);
    expect(readLogFile(file)).toMatchObject({ ok: false, violations: [{ violation: 'bad-json', line: 1 }] });
  });

  it('invalid UTF-8 in a JSON string is bad-utf8 with the entries before it, where it used to read as U+FFFD', () => {
    const file = path.join(dir, 'utf8.jsonl');
    const lines = logText(new LogBuilder().cleanTurn().entries).split('\n');
    const bad = Buffer.from(`${lines[1]}`.replace('"kind"', '"kin\u0001"'));
    bad[bad.indexOf(1)] = 0xc3;
    fs.writeFileSync(file, Buffer.concat([Buffer.from(`${lines[0]}\n`), bad, Buffer.from(`\n${lines.slice(2).join('\n')}`)]));
    const r = readLogFile(file);
    expect(r).toMatchObject({ ok: false, violations: [{ violation: 'bad-utf8', line: 2 }] });
    expect(r.entries.map((e) => e.kind)).toEqual(['session/start']);
  });

  it('a directory or a FIFO given as the log is LOG_NOT_A_FILE at once, never a hang or EISDIR', () => {
    const fifo = path.join(dir, 'fifo.jsonl');
    execFileSync('mkfifo', [fifo]);
    for (const p of [dir, fifo]) {
      let caught: unknown;
      try {
        readLogStream(p);
      } catch (err) {
        caught = err;
      }
      expect(caught, p).toBeInstanceOf(LogAccessError);
      expect(caught).toMatchObject({ code: 'LOG_NOT_A_FILE' });
    }
    expect(() => readLogStream(path.join(dir, 'absent.jsonl'))).toThrow(expect.objectContaining({ code: 'LOG_UNREADABLE', sysCode: 'ENOENT' }));
  });

  it('a log over 512 MiB (the largest JS string) reads back, where reading it into one string threw', () => {
    const file = path.join(dir, 'big.jsonl');
    const entries = new LogBuilder().cleanTurn().entries;
    // Ignorable padding after a whole session: the reader must pass over it, the parser skips it.
    const pad = Buffer.from(`${JSON.stringify({ seq: 0, at: '2026-01-01T00:00:00.000Z', kind: 'x/pad', ignorable: true, pad: 'p'.repeat(4 * 1024 * 1024) })}\n`);
    const fd = fs.openSync(file, 'w');
    fs.writeSync(fd, logText(entries));
    const count = Math.ceil((520 * 1024 * 1024) / pad.length);
    for (let i = 0; i < count; i++) fs.writeSync(fd, pad);
    fs.closeSync(fd);
    expect(fs.statSync(file).size).toBeGreaterThan(512 * 1024 * 1024);
    const r = readLogFile(file);
    expect(r).toMatchObject({ ok: true, endsWithNewline: true });
    if (!r.ok) return;
    expect(r.entries).toHaveLength(entries.length);
    expect(r.goodBytes).toBe(fs.statSync(file).size);
  }, 60_000);
});
