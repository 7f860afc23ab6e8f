/**
 * `npm run demo:bootstrap` from a fresh clone (never built): a scripted
 * self-edit of bridle on a disposable copy — the glob tool's presenter
 * inspected, changed and tested in the copy, then the bridle built from the
 * copy shows the change — while the clone itself stays as it was.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyFile } from '../../cli/verify-log.js';
import type { EntryOf } from '../../log/entries.js';
import { runCommand, userEnv } from '../helpers/npm.js';
import { tempDir } from '../helpers/temp.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const root = realpathSync(tempDir('bridle-bootstrap-e2e-'));
const copies: string[] = [];
afterAll(() => {
  for (const c of copies) rmSync(join(c, '..'), { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) => spawnSync('git', args, { cwd, encoding: 'utf8' });

/** A clone as a newcomer has it after `npm ci`: this checkout's files (uncommitted ones too), node_modules, no build output. */
function freshClone(): string {
  const dir = join(root, 'clone');
  expect(git(root, 'clone', '-q', repo, dir).status).toBe(0);
  const left = new Set(['.git', 'node_modules', 'dist', 'coverage', '.bridle', '.vitest-report.json']);
  cpSync(repo, dir, { recursive: true, verbatimSymlinks: true, filter: (src) => !left.has(relative(repo, src).split(sep)[0]!) });
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

describe('the bootstrap demo', () => {
  it('runs from a fresh clone and leaves the repo unchanged: round 1 edits and tests the glob presenter in a copy, round 2 (built from the copy) shows it', { timeout: 240_000 }, async () => {
    const clone = freshClone();
    expect(existsSync(join(clone, 'dist'))).toBe(false);
    const status = git(clone, 'status', '--porcelain', '--untracked-files=all').stdout;
    const glob = readFileSync(join(clone, 'tools/glob.ts'), 'utf8');
    const home = join(root, 'home');
    const r = await runCommand('npm', ['run', '-s', 'demo:bootstrap'], { cwd: clone, env: userEnv({ BRIDLE_HOME: home }), timeoutMs: 220_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);

    // Labelled scripted, wherever its output shows.
    expect(r.stderr).toContain('a scripted model (canned answers from examples/bootstrap/round-1.json and round-2.json, not a live model)');
    expect(r.stderr).toContain('model: scripted: bootstrap round 1');
    expect(r.stderr).toContain('model: scripted: bootstrap round 2');
    const [one, two] = r.stdout.split(/^turn t1 ended: completed.*$/m);
    expect(one).toContain('[scripted]');
    // The same call, before and after the self-edit.
    expect(one).toMatch(/^→ glob tools\/\*\.ts$/m);
    expect(two).toMatch(/^→ glob "tools\/\*\.ts"$/m);

    // Both logs printed; they verify; round 1 ran glob's tests in the copy, and they passed.
    const logs = [...r.stderr.matchAll(/^round [12] log: (.+)$/gm)].map((m) => m[1]!);
    expect(logs).toHaveLength(2);
    const [first] = logs.map((l) => verifyFile(l)).map((v) => (expect(v.verdict.ok).toBe(true), v.entries));
    const bash = first!.find((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result' && e.name === 'bash')!;
    expect(bash.status).toBe('ok');
    expect(bash.content).toMatch(/Tests\s+(\d+) passed \(\1\)/);

    // The clone is as it was; the copy differs.
    expect(git(clone, 'status', '--porcelain', '--untracked-files=all').stdout).toBe(status);
    expect(readFileSync(join(clone, 'tools/glob.ts'), 'utf8')).toBe(glob);
    const copy = /the copy stays at (.+)\.$/m.exec(r.stderr)![1]!;
    copies.push(copy);
    expect(readFileSync(join(copy, 'tools/glob.ts'), 'utf8')).toContain('present: (args) => `glob ${JSON.stringify(args.pattern)}`,');
    expect(git(copy, 'diff', '--stat', '--', 'tools').stdout).toMatch(/tools\/glob\.ts\s+\| 2 \+-/);
  });
});
