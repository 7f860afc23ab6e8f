/**
 * The demos as a newcomer runs them, in one checkout that was never built
 * (no `dist/`; `npm ci` builds nothing):
 * - `npm start` builds, then the demo ends with a fixed, passing test on its
 *   throwaway copy;
 * - `npm run demo:ralph` (on the build `npm start` made: a second build of the
 *   same sources would prove nothing more): four flaky tests with unrelated
 *   causes, one fixed per round by a scripted model; round 3 claims complete
 *   too early and the verifier (the suite run 20 times) rejects it; round 4 is
 *   told what failed, fixes it, and the run ends verified.
 * The example in the repo is unchanged by either.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry, EntryOf } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { freshCheckout, runCommand, userEnv } from '../helpers/npm.js';
import { tempDir } from '../helpers/temp.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const root = realpathSync(tempDir('bridle-demos-'));
let checkout = '';
beforeAll(() => {
  checkout = freshCheckout(repo, join(root, 'checkout'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

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
    expect(readFileSync(join(copy, 'src/receipt.js'), 'utf8')).toContain('now = () => new Date()');
    expect(readFileSync(join(checkout, 'examples/flaky-checkout/ralph/overlay/src/receipt.js'), 'utf8')).not.toContain('now = () => new Date()');
    expect(readFileSync(join(checkout, 'examples/flaky-checkout/project/test/checkout.test.js'), 'utf8')).not.toContain('await catalog.load');
  });
});
