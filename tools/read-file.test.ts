import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileTool, type ReadFileArgs } from './read-file.js';
import { createTempWorkspace, type TempWorkspace } from '../adapters/fs/testing.js';

let t: TempWorkspace;
beforeEach(() => {
  t = createTempWorkspace();
});
afterEach(() => t.cleanup());

const read = (args: ReadFileArgs) => readFileTool.execute(readFileTool.parameters.parse(args), t.ctx);
const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

describe('read_file', () => {
  it('prints the whole file with line numbers', async () => {
    t.write({ 'a.txt': 'alpha\nbeta\r\ngamma' });
    expect(await read({ path: 'a.txt' })).toEqual({ status: 'ok', content: '   1\talpha\n   2\tbeta\n   3\tgamma' });
  });

  it('reads a window with offset and limit and says how to go on', async () => {
    t.write({ 'a.txt': numbered(5) });
    const out = await read({ path: 'a.txt', offset: 2, limit: 2 });
    expect(out.content).toBe('   2\tline 2\n   3\tline 3\n[showing lines 2-3 of 5; use offset=4 to read on]');
    expect((await read({ path: 'a.txt', offset: 4 })).content).toBe('   4\tline 4\n   5\tline 5');
  });

  it('caps a long file at 2000 lines with a note', async () => {
    t.write({ 'long.txt': numbered(2500) });
    const out = await read({ path: 'long.txt' });
    const lines = out.content.split('\n');
    expect(lines).toHaveLength(2001);
    expect(lines[1999]).toBe('2000\tline 2000');
    expect(lines[2000]).toBe('[showing lines 1-2000 of 2500, cut at 2000 lines; use offset=2001 to read on]');
  });

  it('caps output at 256 KiB and clips very long lines', async () => {
    t.write({ 'wide.txt': Array.from({ length: 300 }, () => 'x'.repeat(1500)).join('\n') });
    const out = await read({ path: 'wide.txt' });
    expect(Buffer.byteLength(out.content)).toBeLessThan(256 * 1024 + 200);
    expect(out.content).toMatch(/\[showing lines 1-\d+ of 300, cut at 256 KiB; use offset=\d+ to read on\]$/);

    t.write({ 'one.txt': 'y'.repeat(5000) });
    expect((await read({ path: 'one.txt' })).content).toBe(`   1\t${'y'.repeat(2000)}… [3000 more characters]`);
  });

  it('reads a 600 MiB file without a newline as one clipped line (it once threw RangeError: Invalid string length, uncaught)', async () => {
    t.sparse('huge.txt', 'a'.repeat(8192), 600 * 1024 * 1024); // the rest is a hole: no disk, no newline
    const out = await read({ path: 'huge.txt' });
    expect(out.status).toBe('ok');
    expect(out.content).toBe(`   1\t${'a'.repeat(2000)}… [${600 * 1024 * 1024 - 2000} more characters]`);
  });

  it('clips an over-long line in a window and goes on with the next lines', async () => {
    t.write({ 'mixed.txt': `short\n${'é'.repeat(100_000)}\r\nafter\n` });
    expect((await read({ path: 'mixed.txt' })).content).toBe(`   1\tshort\n   2\t${'é'.repeat(2000)}… [98000 more characters]\n   3\tafter`);
    expect((await read({ path: 'mixed.txt', offset: 3 })).content).toBe('   3\tafter');
  });

  it('widens the number column past 9999', async () => {
    t.write({ 'a.txt': numbered(10_001) });
    expect((await read({ path: 'a.txt', offset: 9999, limit: 2 })).content).toBe(
      ' 9999\tline 9999\n10000\tline 10000\n[showing lines 9999-10000 of 10001; use offset=10001 to read on]',
    );
  });

  it('says so for empty files and offsets past the end', async () => {
    t.write({ 'empty.txt': '', 'a.txt': numbered(3) });
    expect(await read({ path: 'empty.txt' })).toEqual({ status: 'ok', content: '(empty file: empty.txt)' });
    expect(await read({ path: 'a.txt', offset: 9 })).toMatchObject({ status: 'error', code: 'OFFSET_OUT_OF_RANGE' });
  });

  it('fails with stable codes', async () => {
    t.write({ 'dir/x.txt': 'x', 'bin.dat': Buffer.from([0x89, 0x50, 0, 1, 2]) });
    t.write({ [path.join(t.outside, 'secret.txt')]: 'secret' });
    t.symlink(t.outside, path.join(t.workspace, 'link'));
    t.write({ [path.join(t.bridleHome, 'config.json')]: '{}' });
    const cases: [string, string][] = [
      ['missing.txt', 'NOT_FOUND'],
      ['dir', 'IS_A_DIRECTORY'],
      ['bin.dat', 'BINARY_FILE'],
      ['../outside/secret.txt', 'OUTSIDE_WORKSPACE'],
      ['/etc/passwd', 'OUTSIDE_WORKSPACE'],
      ['link/secret.txt', 'OUTSIDE_WORKSPACE'],
      [path.join(t.bridleHome, 'config.json'), 'INSIDE_BRIDLE_HOME'],
    ];
    for (const [p, code] of cases) {
      const out = await read({ path: p });
      expect(out, p).toMatchObject({ status: 'error', code });
      expect(out.content).toContain(p);
    }
  });

  it('rejects bad arguments in its schema and presents calls in one line', () => {
    expect(readFileTool.parameters.safeParse({ path: 'a', offset: 0 }).success).toBe(false);
    expect(readFileTool.parameters.safeParse({ path: 'a', extra: 1 }).success).toBe(false);
    expect(readFileTool.present({ path: 'src/a.ts' })).toBe('read_file src/a.ts');
    expect(readFileTool.present({ path: 'src/a.ts', offset: 10, limit: 5 })).toBe('read_file src/a.ts:10-14');
    expect(readFileTool.readOnly && readFileTool.idempotent).toBe(true);
  });
});
