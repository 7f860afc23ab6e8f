import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LIST_MAX_ENTRIES, listDirTool, type ListDirArgs } from './list-dir.js';
import { createTempWorkspace, type TempWorkspace } from '../adapters/fs/testing.js';

let t: TempWorkspace;
beforeEach(() => {
  t = createTempWorkspace();
});
afterEach(() => t.cleanup());

const list = (args: ListDirArgs) => listDirTool.execute(listDirTool.parameters.parse(args), t.ctx);

describe('list_dir', () => {
  it('lists the root by default, sorted, directories with a slash, links with @', async () => {
    t.write({ 'b.txt': '', 'a/x': '', 'C.md': '', '.env': '' });
    t.symlink('b.txt', path.join(t.workspace, 'link'));
    expect(await list({})).toEqual({ status: 'ok', content: ['.env', 'C.md', 'a/', 'b.txt', 'link@'].join('\n') });
    expect((await list({ path: 'a' })).content).toBe('x');
  });

  it('says when a directory is empty', async () => {
    t.mkdir(path.join(t.workspace, 'empty'));
    expect((await list({ path: 'empty' })).content).toBe('(empty directory: empty)');
  });

  it('caps long listings with a count of what was left out', async () => {
    t.write(Object.fromEntries(Array.from({ length: LIST_MAX_ENTRIES + 5 }, (_, i) => [`f${String(i).padStart(4, '0')}`, ''])));
    const lines = (await list({})).content.split('\n');
    expect(lines).toHaveLength(LIST_MAX_ENTRIES + 1);
    expect(lines.at(-1)).toBe(`[5 more entries not shown, of ${LIST_MAX_ENTRIES + 5}]`);
  });

  it('fails with stable codes', async () => {
    t.write({ 'f.txt': '' });
    t.symlink(t.outside, path.join(t.workspace, 'link'));
    expect(await list({ path: 'nope' })).toMatchObject({ code: 'NOT_FOUND' });
    expect(await list({ path: 'f.txt' })).toMatchObject({ code: 'NOT_A_DIRECTORY' });
    expect(await list({ path: '..' })).toMatchObject({ code: 'OUTSIDE_WORKSPACE' });
    expect(await list({ path: 'link' })).toMatchObject({ code: 'OUTSIDE_WORKSPACE' });
    expect(await list({ path: t.bridleHome })).toMatchObject({ code: 'INSIDE_BRIDLE_HOME' });
  });

  it('is read-only and presents in one line', () => {
    expect(listDirTool.readOnly).toBe(true);
    expect(listDirTool.present({})).toBe('list_dir .');
  });
});
