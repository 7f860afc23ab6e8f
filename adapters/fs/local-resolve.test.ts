import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTempWorkspace, type TempWorkspace } from './testing.js';
import { ToolError } from '../../ports/tool-error.js';
import { displayPath, isInside } from '../../safety/paths.js';
import { resolveInWorkspace, type LocalRoots } from './local-resolve.js';

/** What the local file system confines to, for a temp workspace. */
const roots = (w: TempWorkspace): LocalRoots => ({ workspace: w.workspace, bridleHome: w.bridleHome, protect: [], protectGit: false });

let t: TempWorkspace;
beforeEach(() => {
  t = createTempWorkspace();
  t.write({ 'src/a.ts': 'a', 'real/x.txt': 'x' });
  fs.writeFileSync(path.join(t.outside, 'secret.txt'), 'secret');
  fs.mkdirSync(path.join(t.outside, 'dir'));
});
afterEach(() => t.cleanup());

async function code(userPath: string, options = {}): Promise<string> {
  const r = await resolveInWorkspace(roots(t), userPath, options);
  return r instanceof ToolError ? r.code : 'OK';
}

describe('resolveInWorkspace: inside', () => {
  it('resolves relative paths against the workspace root', async () => {
    expect(await resolveInWorkspace(roots(t), 'src/a.ts')).toBe(path.join(t.workspace, 'src/a.ts'));
    expect(await resolveInWorkspace(roots(t), './src/../src/a.ts')).toBe(path.join(t.workspace, 'src/a.ts'));
    expect(await resolveInWorkspace(roots(t), '.')).toBe(t.workspace);
  });

  it('accepts absolute paths inside the workspace', async () => {
    expect(await resolveInWorkspace(roots(t), path.join(t.workspace, 'src/a.ts'))).toBe(path.join(t.workspace, 'src/a.ts'));
  });

  it('returns not-yet-existing paths unless mustExist', async () => {
    expect(await resolveInWorkspace(roots(t), 'new/dir/file.txt')).toBe(path.join(t.workspace, 'new/dir/file.txt'));
    const missing = await resolveInWorkspace(roots(t), 'new/file.txt', { mustExist: true });
    expect(missing).toBeInstanceOf(ToolError);
    expect((missing as ToolError).code).toBe('NOT_FOUND');
    expect((missing as ToolError).message).toContain('new/file.txt');
    expect(await code('src/a.ts/child', { mustExist: true })).toBe('NOT_FOUND');
  });

  it('follows symlinks that stay inside, returning the real path', async () => {
    fs.symlinkSync('real', path.join(t.workspace, 'alias'));
    fs.symlinkSync(path.join(t.workspace, 'real/x.txt'), path.join(t.workspace, 'abs-link'));
    expect(await resolveInWorkspace(roots(t), 'alias/x.txt')).toBe(path.join(t.workspace, 'real/x.txt'));
    expect(await resolveInWorkspace(roots(t), 'alias/new.txt')).toBe(path.join(t.workspace, 'real/new.txt'));
    expect(await resolveInWorkspace(roots(t), 'abs-link')).toBe(path.join(t.workspace, 'real/x.txt'));
  });

  it('refuses directories for writing and empty paths', async () => {
    expect(await code('src', { forWrite: true })).toBe('IS_A_DIRECTORY');
    expect(await code('')).toBe('INVALID_PATH');
    expect(await code('a\0b')).toBe('INVALID_PATH');
  });
});

describe('resolveInWorkspace: escapes', () => {
  it('refuses .. escapes and absolute paths outside, naming the path', async () => {
    for (const p of ['../x', 'src/../../x', '..', '/etc/passwd', t.outside]) {
      const r = await resolveInWorkspace(roots(t), p);
      expect(r, p).toBeInstanceOf(ToolError);
      expect((r as ToolError).code).toBe('OUTSIDE_WORKSPACE');
      expect((r as ToolError).message).toContain(`"${p}"`);
    }
  });

  it('refuses a symlinked directory leading out, for existing and new files', async () => {
    fs.symlinkSync(t.outside, path.join(t.workspace, 'link'));
    expect(await code('link')).toBe('OUTSIDE_WORKSPACE');
    expect(await code('link/secret.txt', { mustExist: true })).toBe('OUTSIDE_WORKSPACE');
    expect(await code('link/new.txt', { forWrite: true })).toBe('OUTSIDE_WORKSPACE');
    expect(await code('link/deep/new/file.txt', { forWrite: true })).toBe('OUTSIDE_WORKSPACE');
    const r = (await resolveInWorkspace(roots(t), 'link/secret.txt')) as ToolError;
    expect(r.message).toContain(path.join(t.outside, 'secret.txt'));
  });

  it('refuses file symlinks, dangling symlinks and chains that lead out', async () => {
    fs.symlinkSync(path.join(t.outside, 'secret.txt'), path.join(t.workspace, 'file-link'));
    fs.symlinkSync(path.join(t.outside, 'nope.txt'), path.join(t.workspace, 'dangling'));
    fs.symlinkSync('file-link', path.join(t.workspace, 'chain'));
    fs.symlinkSync('../../outside', path.join(t.workspace, 'src/up'));
    expect(await code('file-link')).toBe('OUTSIDE_WORKSPACE');
    expect(await code('dangling', { forWrite: true })).toBe('OUTSIDE_WORKSPACE');
    expect(await code('chain')).toBe('OUTSIDE_WORKSPACE');
    expect(await code('src/up/secret.txt')).toBe('OUTSIDE_WORKSPACE');
  });

  it('applies .. after a symlink to the real parent, as the kernel does', async () => {
    fs.symlinkSync(path.join(t.outside, 'dir'), path.join(t.workspace, 'dirlink'));
    // Lexically this is ws/secret.txt; really it is outside/secret.txt.
    expect(await code('dirlink/../secret.txt')).toBe('OUTSIDE_WORKSPACE');
  });

  it('reports symlink loops', async () => {
    fs.symlinkSync('loop', path.join(t.workspace, 'loop'));
    expect(await code('loop/x')).toBe('INVALID_PATH');
  });
});

describe('resolveInWorkspace: bridle home', () => {
  it('refuses paths inside a bridle home outside the workspace', async () => {
    expect(await code(path.join(t.bridleHome, 'sessions/s.jsonl'))).toBe('INSIDE_BRIDLE_HOME');
    fs.symlinkSync(t.bridleHome, path.join(t.workspace, 'home-link'));
    expect(await code('home-link/config.json')).toBe('INSIDE_BRIDLE_HOME');
  });

  it('refuses paths inside a bridle home that lies inside the workspace', async () => {
    const inner = createTempWorkspace({ bridleHomeInside: true });
    try {
      for (const p of ['.bridle', '.bridle/sessions/s.jsonl', path.join(inner.bridleHome, 'x')]) {
        const r = await resolveInWorkspace(roots(inner), p);
        expect((r as ToolError).code, p).toBe('INSIDE_BRIDLE_HOME');
        expect((r as ToolError).message).toContain(p);
      }
      expect(await resolveInWorkspace(roots(inner), '.bridlex')).toBe(path.join(inner.workspace, '.bridlex'));
    } finally {
      inner.cleanup();
    }
  });

  it('recognises a bridle home given through a symlinked spelling', async () => {
    const spelled = path.join(t.root, 'home-alias');
    fs.symlinkSync(t.bridleHome, spelled);
    const ctx = { ...roots(t), bridleHome: spelled };
    fs.symlinkSync(t.bridleHome, path.join(t.workspace, 'h'));
    const r = await resolveInWorkspace(ctx, 'h/x');
    expect((r as ToolError).code).toBe('INSIDE_BRIDLE_HOME');
  });
});

describe('helpers', () => {
  it('isInside compares whole components', () => {
    expect(isInside('/a/b', '/a/b')).toBe(true);
    expect(isInside('/a/b', '/a/b/c')).toBe(true);
    expect(isInside('/a/b', '/a/bc')).toBe(false);
    expect(isInside('/', '/x')).toBe(true);
  });

  it('displayPath is workspace-relative with forward slashes', () => {
    expect(displayPath('/w', '/w')).toBe('.');
    expect(displayPath('/w', '/w/a/b.ts')).toBe('a/b.ts');
  });
});
