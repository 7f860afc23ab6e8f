import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTempWorkspace, type TempWorkspace } from '../fs/testing.js';
import { findGitEntries } from './git-entries.js';

let t: TempWorkspace;
beforeEach(() => {
  t = createTempWorkspace();
});
afterEach(() => t.cleanup());

describe('findGitEntries', () => {
  it('finds every .git at any depth, directory or file, in any case, and not what lies inside one', () => {
    t.write({ '.git/config': '', 'vendor/x/.git/modules/y/.git': '', 'a/b/c/d/.GIT': 'gitdir: x', 'src/index.ts': '' });
    const { found, truncated } = findGitEntries(t.workspace);
    expect(found.map((p) => path.relative(t.workspace, p)).sort()).toEqual(['.git', 'a/b/c/d/.GIT', 'vendor/x/.git']);
    expect(truncated).toBe(false);
  });

  it('never follows a symlink out of the workspace; a .git link counts by its target when that is inside', () => {
    fs.mkdirSync(path.join(t.outside, 'repo/.git'), { recursive: true });
    t.symlink(t.outside, path.join(t.workspace, 'out'));
    t.write({ 'real/HEAD': '' });
    t.symlink('real', path.join(t.workspace, '.git'));
    t.write({ 'sub/keep': '' });
    t.symlink(path.join(t.outside, 'repo/.git'), path.join(t.workspace, 'sub/.git'));
    expect(findGitEntries(t.workspace).found).toEqual([path.join(t.workspace, 'real')]);
  });

  it('stops at its bound and says so', () => {
    t.write({ 'a/1': '', 'b/2': '', 'c/.git/x': '' });
    expect(findGitEntries(t.workspace, 2).truncated).toBe(true);
  });
});
