/**
 * The file tools may not write any `.git` below the workspace, nor create one
 * (issue 20 item 12): only the workspace's own `.git` was protected, so a
 * vendored checkout's config or a new `sub/.git` could be planted, and a
 * hook or `core.fsmonitor` there ran at the user's next git command.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editFileTool } from '../../tools/edit-file.js';
import { writeFileTool } from '../../tools/write-file.js';
import type { ToolContext } from '../../ports/tools.js';
import { openForUpdate } from './local-open.js';
import { createTempWorkspace, type TempWorkspace } from './testing.js';

let t: TempWorkspace;
/** What the provider gave the file tools without --allow-git-writes: the workspace's own .git protected. */
let guarded: ToolContext;
beforeEach(() => {
  t = createTempWorkspace();
  t.write({ 'vendor/x/.git/config': '[core]\n', 'sub/a.txt': 'a', 'notgit/HEAD': 'ref\n' });
  guarded = t.ctxWith({ protect: [t.at('.git')] });
});
afterEach(() => t.cleanup());

const write = (p: string, ctx = guarded) => writeFileTool.execute({ path: p, content: '#!/bin/sh\ntouch pwned\n' }, ctx);

describe('nested .git under the local file system', () => {
  it("write_file to vendor/x/.git/config is refused (a nested repository's config was writable)", async () => {
    const out = await write('vendor/x/.git/config');
    expect(out).toMatchObject({ status: 'error', code: 'PROTECTED_PATH' });
    expect(out.content).toContain('--allow-git-writes');
    expect(t.read(t.at('vendor/x/.git/config'))).toBe('[core]\n');
  });

  it('creating sub/.git/hooks/pre-commit, a .git file, or .GIT is refused, and nothing is created', async () => {
    for (const p of ['sub/.git/hooks/pre-commit', 'sub/.git', 'new/.GIT/config', '.git/config']) {
      expect(await write(p), p).toMatchObject({ code: 'PROTECTED_PATH' });
    }
    expect(fs.readdirSync(t.at('sub'))).toEqual(['a.txt']);
    expect(fs.existsSync(t.at('new'))).toBe(false);
  });

  it('edit_file of a nested repository config is refused', async () => {
    const out = await editFileTool.execute({ path: 'vendor/x/.git/config', old_text: '[core]', new_text: '[core]\n\tfsmonitor = ./evil.sh' }, guarded);
    expect(out).toMatchObject({ status: 'error', code: 'PROTECTED_PATH' });
    expect(t.read(t.at('vendor/x/.git/config'))).toBe('[core]\n');
  });

  it('a symlink does not carry a write into a .git, and a link named .git protects its target', async () => {
    t.symlink('vendor/x/.git', t.at('alias'));
    t.symlink('../notgit', t.at('sub/.git'));
    expect(await write('alias/hooks/post-checkout')).toMatchObject({ code: 'PROTECTED_PATH' });
    expect(await write('sub/.git/HEAD')).toMatchObject({ code: 'PROTECTED_PATH' });
    expect(t.read(t.at('notgit/HEAD'))).toBe('ref\n');
    expect(fs.existsSync(t.at('vendor/x/.git/hooks'))).toBe(false);
  });

  it('a directory renamed to .git after the check is caught when the file is opened', async () => {
    // What resolveInWorkspace approved as sub/a.txt now lies in a .git: the open-time check refuses it.
    fs.renameSync(t.at('sub'), t.at('sub.git-tmp'));
    fs.mkdirSync(t.at('sub'));
    fs.renameSync(t.at('sub.git-tmp'), t.at('sub/.git'));
    const opened = await openForUpdate({ workspace: t.workspace, bridleHome: t.bridleHome, protectGit: true }, t.at('sub/.git/a.txt'), 'sub/a.txt');
    expect(opened).toMatchObject({ code: 'PATH_CHANGED' });
    expect(t.read(t.at('sub/.git/a.txt'))).toBe('a');
  });

  it('with git writes allowed, each of them is written', async () => {
    const open = t.ctxWith({ protect: [], protectGit: false });
    for (const p of ['vendor/x/.git/config', 'sub/.git/hooks/pre-commit']) expect(await write(p, open), p).toMatchObject({ status: 'ok' });
    expect(t.read(t.at('sub/.git/hooks/pre-commit'))).toContain('pwned');
  });
});
