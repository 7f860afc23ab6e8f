import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findCommand, SYSTEM_DEPS, systemDepsRequired, systemDepVerdict } from './system-deps.js';

let root: string;
let bin: string;
let empty: string;
const dep = { command: 'bridle-fixture-tool', package: 'bridle-fixture-pkg' };

beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bridle-sysdeps-')));
  bin = path.join(root, 'bin');
  empty = path.join(root, 'empty');
  fs.mkdirSync(bin);
  fs.mkdirSync(empty);
  fs.writeFileSync(path.join(bin, dep.command), '#!/bin/sh\n', { mode: 0o755 });
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('systemDepsRequired', () => {
  it('is off on a plain machine, on in CI, and BRIDLE_REQUIRE_SYSTEM_DEPS decides over CI', () => {
    expect(systemDepsRequired({})).toBe(false);
    expect(systemDepsRequired({ CI: 'true' })).toBe(true);
    expect(systemDepsRequired({ CI: '1' })).toBe(true);
    expect(systemDepsRequired({ CI: 'false' })).toBe(false);
    expect(systemDepsRequired({ CI: '' })).toBe(false);
    expect(systemDepsRequired({ BRIDLE_REQUIRE_SYSTEM_DEPS: '1' })).toBe(true);
    expect(systemDepsRequired({ BRIDLE_REQUIRE_SYSTEM_DEPS: '0', CI: 'true' })).toBe(false);
  });
});

describe('findCommand', () => {
  it('finds an executable file on PATH, and BRIDLE_SYSTEM_DEPS_PATH replaces PATH', () => {
    expect(findCommand(dep.command, { PATH: `${empty}${path.delimiter}${bin}` })).toBe(path.join(bin, dep.command));
    expect(findCommand(dep.command, { PATH: bin, BRIDLE_SYSTEM_DEPS_PATH: empty })).toBeUndefined();
    expect(findCommand(dep.command, { PATH: empty, BRIDLE_SYSTEM_DEPS_PATH: bin })).toBe(path.join(bin, dep.command));
  });

  it('does not take a file it cannot execute, or a directory, for the command', () => {
    fs.writeFileSync(path.join(empty, 'plain'), 'not a program', { mode: 0o644 });
    fs.mkdirSync(path.join(empty, 'folder'));
    expect(findCommand('plain', { PATH: empty })).toBeUndefined();
    expect(findCommand('folder', { PATH: empty })).toBeUndefined();
    expect(findCommand(dep.command, {})).toBeUndefined();
  });
});

describe('systemDepVerdict', () => {
  it('runs with the path found; missing, it skips with one line naming the install command, or fails where required', () => {
    expect(systemDepVerdict('the fixture tests', dep, { BRIDLE_SYSTEM_DEPS_PATH: bin })).toEqual({ kind: 'run', path: path.join(bin, dep.command) });
    const skip = systemDepVerdict('the fixture tests', dep, { BRIDLE_SYSTEM_DEPS_PATH: empty });
    expect(skip).toEqual({ kind: 'skip', line: 'skipped "the fixture tests": bridle-fixture-tool is not installed (install bridle-fixture-pkg: apt-get install bridle-fixture-pkg)' });
    const fail = systemDepVerdict('the fixture tests', dep, { BRIDLE_SYSTEM_DEPS_PATH: empty, BRIDLE_REQUIRE_SYSTEM_DEPS: '1' });
    expect(fail.kind).toBe('fail');
    expect(fail.kind === 'fail' && fail.line).toMatch(/^"the fixture tests" needs bridle-fixture-tool, .*: install bridle-fixture-pkg: apt-get install bridle-fixture-pkg$/);
    expect(fail.kind === 'fail' && fail.line.split('\n')).toHaveLength(1);
  });

  it('names the Debian package for bubblewrap and chromium', () => {
    expect(systemDepVerdict('x', SYSTEM_DEPS.bwrap, { BRIDLE_SYSTEM_DEPS_PATH: empty })).toMatchObject({ line: expect.stringContaining('install bubblewrap: apt-get install bubblewrap') });
    expect(systemDepVerdict('x', SYSTEM_DEPS.chromium, { BRIDLE_SYSTEM_DEPS_PATH: empty })).toMatchObject({ line: expect.stringContaining('install chromium: apt-get install chromium') });
  });
});

describe('describeWithSystemDep, in a vitest of its own', () => {
  it('present: the tests run; missing: they count as skipped and one line says why; required: one test fails with that line', { timeout: 60_000 }, () => {
    const out = path.join(root, 'out');
    const config = fileURLToPath(new URL('./system-deps-fixture/vitest.config.ts', import.meta.url));
    const vitest = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));
    const r = spawnSync(process.execPath, [vitest, 'run', '--config', config], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, FIXTURE_OUT: out, FIXTURE_BIN: bin, FIXTURE_EMPTY: empty, NO_COLOR: '1' },
      encoding: 'utf8',
      timeout: 50_000,
    });
    expect(r.status, r.stdout + r.stderr).toBe(1);
    const report = JSON.parse(fs.readFileSync(path.join(out, 'report.json'), 'utf8')) as { testResults: { assertionResults: { fullName: string; status: string; failureMessages: string[] }[] }[] };
    const results = report.testResults.flatMap((f) => f.assertionResults).map((a) => [a.fullName, a.status, a.failureMessages.join('')]);
    expect(results).toEqual([
      ['present runs with the path it found', 'passed', ''],
      ['missing is not run', 'skipped', ''],
      ['missing is not run either', 'skipped', ''],
      ['required needs bridle-fixture-tool', 'failed', expect.stringContaining('"required" needs bridle-fixture-tool, which is not installed')],
    ]);
    expect(r.stdout + r.stderr).toContain('skipped "missing": bridle-fixture-tool is not installed (install bridle-fixture-pkg: apt-get install bridle-fixture-pkg)');
  });
});
