/** `npm start` as a user runs it: the demo ends with a fixed, passing test on its throwaway copy. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { EntryOf } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';

const demo = fileURLToPath(new URL('../../dist/examples/flaky-checkout/demo.js', import.meta.url));

describe('the demo', () => {
  it('investigates, fixes, and proves the fix with 30 clean runs', { timeout: 180_000 }, () => {
    const home = mkdtempSync(join(tmpdir(), 'bridle-demo-home-'));
    const r = spawnSync(process.execPath, [demo], { env: { ...process.env, BRIDLE_HOME: home }, encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
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
    expect(readFileSync(fileURLToPath(new URL('../../examples/flaky-checkout/project/test/checkout.test.js', import.meta.url)), 'utf8')).not.toContain('await catalog.load');
    expect(entries.at(-2)).toMatchObject({ kind: 'turn/end', reason: 'completed' });
  });
});
