/**
 * `npm run demo:ralph` as a newcomer runs it, in a checkout that was never
 * built: four flaky tests with unrelated causes, one fixed per round by a
 * scripted model; round 3 claims complete too early and the verifier (the
 * suite run 20 times) rejects it; round 4 is told what failed, fixes it, and
 * the run ends verified. The example in the repo is unchanged.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Entry, EntryOf } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { freshCheckout, runCommand, userEnv } from '../helpers/npm.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const root = realpathSync(mkdtempSync(join(tmpdir(), 'bridle-ralph-demo-test-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the Ralph demo', () => {
  it('npm run demo:ralph from a fresh clone: one fix per round, a false complete rejected by the verifier running the suite 20 times, then verified (exit 0)', { timeout: 400_000 }, async () => {
    const checkout = freshCheckout(repo, join(root, 'checkout'));
    expect(existsSync(join(checkout, 'dist'))).toBe(false);
    const home = join(root, 'home');
    const r = await runCommand('npm', ['run', 'demo:ralph'], { cwd: checkout, env: userEnv({ BRIDLE_HOME: home }), timeoutMs: 380_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stderr).toMatch(/a scripted model \(canned responses from examples\/flaky-checkout\/ralph\/script\.json, not a live model\)/);
    expect(r.stdout).toContain('[scripted]');
    expect(r.stdout).toContain('ralph: verified complete after round 4');
    const dir = join(home, 'sessions');
    const files = readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort((a, b) => a.length - b.length);
    const read = (f: string): Entry[] => parseLog(readFileSync(join(dir, f), 'utf8')).entries;
    const run = read(files[0]!);
    expect(files).toHaveLength(5);
    for (const f of files) expect(verifyLog(read(f)).violations, f).toEqual([]);
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
