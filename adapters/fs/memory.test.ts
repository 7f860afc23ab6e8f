import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsIoError, readAtMost, type FileSystem } from '../../ports/fs.js';
import { ToolError } from '../../ports/tool-error.js';
import { createLocalFs } from './local.js';
import { createMemoryFs } from './memory.js';
import { tempDir } from '../../test/helpers/temp.js';

const text = (b: Uint8Array) => new TextDecoder().decode(b);
const drain = async <T>(it: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};
/** How an operation ended: its value, or its refusal's class, code and words. */
async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return { ok: await run() };
  } catch (err) {
    if (!(err instanceof ToolError)) throw err;
    return { [err instanceof FsIoError ? 'io' : 'refused']: err.code, message: err.message };
  }
}

describe('the memory file system', () => {
  it('holds what it is seeded with and what is written, and reads it back by range', async () => {
    const m = createMemoryFs({ files: { 'a.txt': 'hello world', 'deep/er/b.txt': 'b' } });
    const h = await m.open(await m.realpath('a.txt', { mustExist: true }));
    expect(h.size).toBe(11);
    expect(text(await h.read(6, 100))).toBe('world');
    expect(await h.read(11, 5)).toHaveLength(0);
    expect(text((await readAtMost(h, 100))!)).toBe('hello world');
    expect(await readAtMost(h, 5)).toBeUndefined();
    expect(await m.write(await m.realpath('new/c.txt', { forWrite: true }), new TextEncoder().encode('c'))).toEqual({ created: true });
    expect(await m.write(await m.realpath('new/c.txt', { forWrite: true }), new TextEncoder().encode('cc'))).toEqual({ created: false });
    expect((await m.list(m.root)).map((e) => `${e.name}:${e.kind}`).sort()).toEqual(['a.txt:file', 'deep:directory', 'new:directory']);
    expect((await drain(m.walk(m.root))).map((e) => e.display)).toEqual(['a.txt', 'deep/er/b.txt', 'new/c.txt']);
    expect((await drain(m.walk(m.root, { skipDirs: ['er'] }))).map((e) => e.display)).toEqual(['a.txt', 'new/c.txt']);
  });

  it('updates in one go: the change sees the bytes, and writes back only what it returns', async () => {
    const m = createMemoryFs({ files: { 'a.txt': 'one two' } });
    const p = await m.realpath('a.txt', { mustExist: true, forWrite: true });
    expect(await m.update(p, { maxBytes: 100 }, (b) => new TextEncoder().encode(text(b).replace('two', '2')))).toBe('replaced');
    expect(await m.update(p, { maxBytes: 100 }, () => undefined)).toBe('unchanged');
    expect(await m.update(p, { maxBytes: 3 }, () => { throw new Error('never called'); })).toBe('too-large');
    expect(text(await (await m.open(p)).read(0, 100))).toBe('one 2');
  });

  it('an aborted walk ends quietly', async () => {
    const m = createMemoryFs({ files: { 'a/x': '', 'b/y': '' } });
    expect(await drain(m.walk(m.root, { signal: AbortSignal.abort() }))).toEqual([]);
  });
});

describe('the memory file system refuses what the local one refuses, in the same words', () => {
  let root: string;
  let local: FileSystem;
  let memory: FileSystem;
  beforeEach(() => {
    // Both rooted at the same path, holding the same files: their answers can be compared as they are.
    root = fs.realpathSync(tempDir('bridle-memfs-'));
    const ws = path.join(root, 'ws');
    fs.mkdirSync(path.join(ws, 'dir'), { recursive: true });
    fs.mkdirSync(path.join(ws, '.git'));
    fs.writeFileSync(path.join(ws, 'file.txt'), 'x');
    fs.writeFileSync(path.join(ws, 'big.txt'), '0123456789');
    local = createLocalFs({ workspace: ws, bridleHome: path.join(root, 'home'), protect: [path.join(ws, '.git')] });
    memory = createMemoryFs({ root: ws, files: { 'file.txt': 'x', 'big.txt': '0123456789', 'dir/.keep': '' }, protect: ['.git'] });
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  const cases: [string, (f: FileSystem) => Promise<unknown>][] = [
    ['an empty path', (f) => f.realpath('  ')],
    ['a NUL byte', (f) => f.realpath('a\0b')],
    ['a .. escape', (f) => f.realpath('dir/../../x')],
    ['an absolute path outside', (f) => f.realpath('/etc/passwd')],
    ['a missing file that must exist', (f) => f.realpath('missing.txt', { mustExist: true })],
    ['a file used as a directory, that must exist', (f) => f.realpath('file.txt/child', { mustExist: true })],
    ['a directory to write', (f) => f.realpath('dir', { forWrite: true })],
    ['a write under a protected path', (f) => f.realpath('.git/hooks/pre-commit', { forWrite: true })],
    ['a read of a directory', async (f) => f.open(await f.realpath('dir'))],
    ['a write of a directory', async (f) => f.write(await f.realpath('dir'), new Uint8Array())],
    ['a write below a file', async (f) => f.write(await f.realpath('file.txt/child', { forWrite: true }), new Uint8Array())],
    ['a stat of what is not there', async (f) => f.stat(await f.realpath('missing.txt'))],
    ['an update of what is not there', async (f) => f.update(await f.realpath('missing.txt'), { maxBytes: 10 }, () => undefined)],
    ['an update over the limit', async (f) => f.update(await f.realpath('big.txt'), { maxBytes: 9 }, () => undefined)],
    ['a stat of a file', async (f) => f.stat(await f.realpath('big.txt'))],
  ];
  for (const [what, run] of cases) {
    it(what, async () => {
      const fromLocal = await outcome(() => run(local));
      expect(await outcome(() => run(memory))).toEqual(fromLocal);
      expect(fromLocal).not.toEqual({ ok: undefined });
    });
  }
});
