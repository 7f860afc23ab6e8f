import { mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { allowedRoots, checkCwd } from './allowed-cwd.js';
import { tempDir } from '../test/helpers/temp.js';

let root: string;
let ws: string;
beforeEach(() => {
  root = realpathSync(tempDir('bridle-cwd-'));
  ws = join(root, 'ws');
  mkdirSync(join(ws, 'sub', 'deeper'), { recursive: true });
  mkdirSync(join(root, 'other'));
  writeFileSync(join(ws, 'file.txt'), 'x');
  symlinkSync('/', join(ws, 'to-root'));
  symlinkSync(join(ws, 'sub'), join(root, 'link-to-sub'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('which cwd a client may ask for', () => {
  it('accepts the allowed directory and any directory below it, resolved', () => {
    const roots = allowedRoots([ws]);
    expect(checkCwd(ws, roots)).toEqual({ ok: true, cwd: ws });
    expect(checkCwd(join(ws, 'sub', 'deeper'), roots)).toEqual({ ok: true, cwd: join(ws, 'sub', 'deeper') });
    expect(checkCwd(`${ws}/sub/../sub/`, roots)).toEqual({ ok: true, cwd: join(ws, 'sub') });
  });

  it('refuses "/", a sibling, a parent and a path that climbs out with ..', () => {
    const roots = allowedRoots([ws]);
    for (const p of ['/', root, join(root, 'other'), `${ws}/../other`, `${ws}-evil`, '/etc']) {
      expect(checkCwd(p, roots), p).toMatchObject({ ok: false, reason: 'CWD_NOT_ALLOWED' });
    }
  });

  it('refuses a relative path, and a symlink inside that leads outside', () => {
    const roots = allowedRoots([ws]);
    expect(checkCwd('sub', roots)).toMatchObject({ ok: false, reason: 'CWD_NOT_ALLOWED', message: expect.stringContaining('absolute') });
    expect(checkCwd(join(ws, 'to-root'), roots)).toMatchObject({ ok: false, reason: 'CWD_NOT_ALLOWED' });
    expect(checkCwd(join(ws, 'to-root', 'etc'), roots)).toMatchObject({ ok: false, reason: 'CWD_NOT_ALLOWED' });
  });

  it('names a missing directory and a file as such, inside the allowed tree only', () => {
    const roots = allowedRoots([ws]);
    expect(checkCwd(join(ws, 'nope'), roots)).toMatchObject({ ok: false, reason: 'CWD_NOT_FOUND' });
    expect(checkCwd(join(ws, 'file.txt'), roots)).toMatchObject({ ok: false, reason: 'CWD_NOT_A_DIRECTORY' });
    // Outside, existence is not revealed: missing and present look the same.
    expect(checkCwd(join(root, 'nope'), roots)).toMatchObject({ reason: 'CWD_NOT_ALLOWED' });
    expect(checkCwd(join(root, 'other'), roots)).toMatchObject({ reason: 'CWD_NOT_ALLOWED' });
  });

  it('takes several roots, and a root named through a symlink either way', () => {
    const roots = allowedRoots([ws, join(root, 'other'), join(root, 'link-to-sub')]);
    expect(checkCwd(join(root, 'other'), roots)).toEqual({ ok: true, cwd: join(root, 'other') });
    expect(checkCwd(join(root, 'link-to-sub', 'deeper'), roots)).toEqual({ ok: true, cwd: join(ws, 'sub', 'deeper') });
    expect(() => allowedRoots([join(root, 'missing')])).toThrow();
  });
});
