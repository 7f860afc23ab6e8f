import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkProgram, findProgram } from './find-program.js';
import { tempDir } from '../../test/helpers/temp.js';

let root: string;
let ws: string;
let sys: string;
const tool = (dir: string, name = 'tool') => {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  fs.writeFileSync(file, '#!/bin/sh\n', { mode: 0o755 });
  return file;
};
beforeEach(() => {
  root = fs.realpathSync(tempDir('bridle-find-'));
  ws = path.join(root, 'ws');
  sys = path.join(root, 'sys');
  fs.mkdirSync(ws);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('findProgram', () => {
  it('skips relative PATH entries and entries inside the workspace, planted programs included', () => {
    tool(path.join(ws, 'node_modules/.bin'));
    const real = tool(sys);
    const env = { PATH: ['node_modules/.bin', '.', path.join(ws, 'node_modules/.bin'), sys].join(path.delimiter) };
    expect(findProgram('tool', env, ws)).toEqual({ path: real });
    expect(findProgram('tool', { PATH: path.join(ws, 'node_modules/.bin') }, ws)).toHaveProperty('missing');
  });

  it('refuses a program outside the workspace that is a symlink into it, and a PATH entry that is one', () => {
    const planted = tool(path.join(ws, 'bin'));
    fs.mkdirSync(sys);
    fs.symlinkSync(planted, path.join(sys, 'tool'));
    fs.symlinkSync(path.join(ws, 'bin'), path.join(root, 'linked-bin'));
    expect(findProgram('tool', { PATH: sys }, ws)).toHaveProperty('missing');
    expect(findProgram('tool', { PATH: path.join(root, 'linked-bin') }, ws)).toHaveProperty('missing');
  });

  it('keeps the name as spelled (sh linked to bash must start as sh)', () => {
    const bash = tool(path.join(root, 'real'), 'bash');
    fs.mkdirSync(sys);
    fs.symlinkSync(bash, path.join(sys, 'sh'));
    expect(findProgram('sh', { PATH: sys }, ws)).toEqual({ path: path.join(sys, 'sh') });
  });
});

describe('checkProgram ($BRIDLE_BWRAP)', () => {
  it('must be absolute, executable and outside the workspace', () => {
    expect(checkProgram('bwrap', ws, 'BRIDLE_BWRAP')).toEqual({ missing: 'BRIDLE_BWRAP is bwrap, which is not an absolute path' });
    expect(checkProgram(path.join(root, 'none'), ws, 'BRIDLE_BWRAP')).toHaveProperty('missing');
    expect(checkProgram(tool(ws, 'bwrap'), ws, 'BRIDLE_BWRAP')).toMatchObject({ missing: expect.stringContaining('inside the workspace') });
    const ok = tool(sys, 'bwrap');
    expect(checkProgram(ok, ws, 'BRIDLE_BWRAP')).toEqual({ path: ok });
  });
});
