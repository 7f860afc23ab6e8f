/**
 * `npm start` as a newcomer runs it: in a checkout that has never been built
 * (no `dist/`; `npm ci` builds nothing), it builds, then the demo ends with a
 * fixed, passing test on its throwaway copy.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { EntryOf } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { freshCheckout, runCommand, userEnv } from '../helpers/npm.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const root = realpathSync(mkdtempSync(join(tmpdir(), 'bridle-demo-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the demo', () => {
  it('npm start in an unbuilt checkout builds, investigates, fixes, and proves the fix with 30 clean runs', { timeout: 240_000 }, async () => {
    const checkout = freshCheckout(repo, join(root, 'checkout'));
    expect(existsSync(join(checkout, 'dist'))).toBe(false);
    const home = join(root, 'home');
    const r = await runCommand('npm', ['start'], { cwd: checkout, env: userEnv({ BRIDLE_HOME: home }), timeoutMs: 200_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(existsSync(join(checkout, 'dist/examples/flaky-checkout/demo.js'))).toBe(true);
    expect(r.stderr).toMatch(/scripted model \(canned responses/);
    expect(r.stdout).toContain('[scripted]');
    const [f] = readdirSync(join(home, 'sessions'));
    const { entries } = parseLog(readFileSync(join(home, 'sessions', f!), 'utf8'));
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
