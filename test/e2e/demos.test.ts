/**
 * The demos as a newcomer runs them, in one clone that was never built (no
 * `dist/`; `npm ci` builds nothing):
 * - `npm start` builds, then the demo ends with a fixed, passing test on its
 *   throwaway copy;
 * - `npm run demo:ralph` (on the build `npm start` made: a second build of the
 *   same sources would prove nothing more): four flaky tests with unrelated
 *   causes, one fixed per round by a scripted model; round 3 claims complete
 *   too early and the verifier (the suite run 20 times) rejects it; round 4 is
 *   told what failed, fixes it, and the run ends verified;
 * - `npm run demo:bootstrap` (on that build too, ADR 0100): a scripted
 *   self-edit of bridle on a disposable copy — the glob tool's presenter
 *   inspected, changed and tested in the copy, then the bridle built from the
 *   copy shows the change — while the clone itself stays as it was.
 * The example in the repo is unchanged by any of them; the throwaway copies
 * they leave for a user are removed after the file.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyFile } from '../../cli/verify-log.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { runCommand, userEnv } from '../helpers/npm.js';
import { tempDir } from '../helpers/temp.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const root = realpathSync(tempDir('bridle-demos-'));
/** The throwaway copies the demos leave for a user to look at (each names its own in what it prints). */
const copies: string[] = [];
// The bootstrap demo's copy holds a copy of node_modules: removing it took over 30 s at load 17.
afterAll(() => {
  for (const c of copies) rmSync(c, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
}, 120_000);

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
let checkout = '';
beforeAll(() => {
  checkout = freshClone();
});

const sessionFiles = (home: string) => readdirSync(join(home, 'sessions')).filter((f) => f.endsWith('.jsonl'));
const readLog = (home: string, f: string): Entry[] => parseLog(readFileSync(join(home, 'sessions', f), 'utf8')).entries;

describe('the demo', () => {
  it('npm start in an unbuilt checkout builds, investigates, fixes, and proves the fix with 30 clean runs', { timeout: 240_000 }, async () => {
    expect(existsSync(join(checkout, 'dist'))).toBe(false);
    const home = join(root, 'home-demo');
    const r = await runCommand('npm', ['start'], { cwd: checkout, env: userEnv({ BRIDLE_HOME: home }), timeoutMs: 200_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(existsSync(join(checkout, 'dist/examples/flaky-checkout/demo.js'))).toBe(true);
    expect(r.stderr).toMatch(/scripted model \(canned responses/);
    expect(r.stdout).toContain('[scripted]');
    const [f] = sessionFiles(home);
    const entries = readLog(home, f!);
    const bash = entries.filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result' && e.name === 'bash');
    expect(bash).toHaveLength(2);
    expect(bash[1]!.content).toMatch(/failures: 0\/30/);
    const edit = entries.find((e) => e.kind === 'tool/result' && e.name === 'edit_file') as EntryOf<'tool/result'>;
    expect(edit.status).toBe('ok');
    const copy = (entries[0] as EntryOf<'session/start'>).cwd;
    copies.push(copy);
    expect(readFileSync(join(copy, 'test/checkout.test.js'), 'utf8')).toContain('await catalog.load(PRICES)');
    expect(readFileSync(join(checkout, 'examples/flaky-checkout/project/test/checkout.test.js'), 'utf8')).not.toContain('await catalog.load');
    expect(entries.at(-2)).toMatchObject({ kind: 'turn/end', reason: 'completed' });
  });
});

describe('the Ralph demo', () => {
  it('npm run demo:ralph: one fix per round, a false complete rejected by the verifier running the suite 20 times, then verified (exit 0)', { timeout: 400_000 }, async () => {
    const home = join(root, 'home-ralph');
    const r = await runCommand('npm', ['run', 'demo:ralph'], { cwd: checkout, env: userEnv({ BRIDLE_HOME: home }), timeoutMs: 380_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stderr).toMatch(/a scripted model \(canned responses from examples\/flaky-checkout\/ralph\/script\.json, not a live model\)/);
    expect(r.stdout).toContain('[scripted]');
    expect(r.stdout).toContain('ralph: verified complete after round 4');
    const files = sessionFiles(home).sort((a, b) => a.length - b.length);
    const run = readLog(home, files[0]!);
    expect(files).toHaveLength(5);
    for (const f of files) expect(verifyLog(readLog(home, f)).violations, f).toEqual([]);
    const verdicts = run.filter((e): e is EntryOf<'ralph/verdict'> => e.kind === 'ralph/verdict');
    expect(verdicts.map((v) => [v.round, v.verified])).toEqual([
      [3, false],
      [4, true],
    ]);
    expect(verdicts[0]!.output).toMatch(/run \d+ of 20 failed:\nnot ok \d+ - stamps the receipt with the time it was printed/);
    expect(verdicts[1]!.output).toContain('20 of 20 runs passed');
    expect(run.at(-1)).toMatchObject({ kind: 'ralph/end', outcome: 'verified', round: 4 });
    const copy = (run[0] as EntryOf<'session/start'>).cwd;
    copies.push(copy);
    expect(readFileSync(join(copy, 'src/receipt.js'), 'utf8')).toContain('now = () => new Date()');
    expect(readFileSync(join(checkout, 'examples/flaky-checkout/ralph/overlay/src/receipt.js'), 'utf8')).not.toContain('now = () => new Date()');
    expect(readFileSync(join(checkout, 'examples/flaky-checkout/project/test/checkout.test.js'), 'utf8')).not.toContain('await catalog.load');
  });
});

describe('the bootstrap demo', () => {
  it('runs in the clone and leaves it unchanged: round 1 edits and tests the glob presenter in a copy, round 2 (built from the copy) shows it', { timeout: 240_000 }, async () => {
    const clone = checkout;
    const status = git(clone, 'status', '--porcelain', '--untracked-files=all').stdout;
    const glob = readFileSync(join(clone, 'tools/glob.ts'), 'utf8');
    const home = join(root, 'home-bootstrap');
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
    copies.push(join(copy, '..'));
    expect(readFileSync(join(copy, 'tools/glob.ts'), 'utf8')).toContain('present: (args) => `glob ${JSON.stringify(args.pattern)}`,');
    expect(git(copy, 'diff', '--stat', '--', 'tools').stdout).toMatch(/tools\/glob\.ts\s+\| 2 \+-/);
  });
});
