/**
 * `bridle ralph` as a user runs it: rounds of fresh agents on a workspace
 * whose `npm test` fails, a false claim of complete rejected by the
 * `--verify` command (under the bubblewrap sandbox), a fixed round verified,
 * exit 0; every round and check in the run's own log, which `bridle replay`
 * accepts and replays through the machines byte for byte.
 */
import { mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { Entry, EntryOf } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { runCli } from '../helpers/cli.js';
import { describeWithSystemDep, SYSTEM_DEPS } from '../helpers/system-deps.js';
import { tempDir } from '../helpers/temp.js';

export function npmWorkspace(root: string): string {
  const ws = join(root, 'ws');
  mkdirSync(join(ws, 'src'), { recursive: true });
  mkdirSync(join(ws, 'test'));
  writeFileSync(join(ws, 'package.json'), JSON.stringify({ name: 'sums', version: '1.0.0', private: true, type: 'module', scripts: { test: 'node --test' } }));
  writeFileSync(join(ws, 'src', 'sum.js'), 'export const sum = (a, b) => a - b;\n');
  writeFileSync(join(ws, 'test', 'sum.test.js'), "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { sum } from '../src/sum.js';\ntest('adds', () => assert.equal(sum(2, 3), 5));\n");
  return ws;
}

const handoff = (status: string, summary: string, evidence: string) => ({ toolCalls: [{ name: 'handoff', arguments: { status, summary, evidence } }] });

export const RALPH_SCRIPT = {
  label: 'scripted: two Ralph rounds, the first of which claims complete without fixing anything',
  responses: [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'src/sum.js' } }] },
    handoff('complete', 'sum.js looks right to me', 'I read src/sum.js'),
    { text: 'Round 1 handed off.' },
    { toolCalls: [{ name: 'edit_file', arguments: { path: 'src/sum.js', old_text: 'a - b', new_text: 'a + b' } }] },
    { toolCalls: [{ name: 'bash', arguments: { command: 'npm test' } }] },
    handoff('complete', 'sum subtracted; it adds now', 'npm test passes'),
    { text: 'Round 2 handed off.' },
  ],
};

export const readLogs = (home: string): Map<string, Entry[]> => {
  const dir = join(home, 'sessions');
  return new Map(readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort((a, b) => a.length - b.length).map((f) => [f.replace(/\.jsonl$/, ''), parseLog(readFileSync(join(dir, f), 'utf8')).entries]));
};

describeWithSystemDep('bridle ralph', SYSTEM_DEPS.bwrap, () => {
  it('bridle ralph … --verify "npm test" rejects a false complete and ends verified, exit 0', async () => {
    const root = realpathSync(tempDir('bridle-ralph-'));
    const home = join(root, 'home');
    const ws = npmWorkspace(root);
    const script = join(root, 'script.json');
    writeFileSync(script, JSON.stringify(RALPH_SCRIPT));
    const r = await runCli(['ralph', 'make npm test pass', '--rounds', '3', '--verify', 'npm test', '--model', `scripted:${script}`, '--cwd', ws, '--approval', 'auto'], { env: { BRIDLE_HOME: home }, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('ralph: verified complete after round 2');
    expect(r.stderr).toMatch(/ralph: rejected \(exit 1\)/);
    expect(r.stderr).toMatch(/log: \S+\.jsonl\n$/);
    expect(readFileSync(join(ws, 'src', 'sum.js'), 'utf8')).toContain('a + b');
    const logs = readLogs(home);
    const [[id, run]] = [...logs.entries()] as [[string, Entry[]]];
    expect(r.stderr).toContain(`log: ${join(home, 'sessions', `${id}.jsonl`)}`);
    expect([...logs.keys()].sort()).toEqual([id, `${id}.r1`, `${id}.r2`].sort());
    const verdicts = run.filter((e): e is EntryOf<'ralph/verdict'> => e.kind === 'ralph/verdict');
    expect(verdicts.map((v) => [v.round, v.verified, v.exitCode])).toEqual([
      [1, false, 1],
      [2, true, 0],
    ]);
    expect(verdicts[0]!.output).toMatch(/fail 1/);
    for (const log of logs.values()) expect(verifyLog(log).violations).toEqual([]);
    for (const name of logs.keys()) {
      const rp = await runCli(['replay', join(home, 'sessions', `${name}.jsonl`), '--machines'], { env: { BRIDLE_HOME: home } });
      expect(rp.code, `${name}: ${rp.stdout}${rp.stderr}`).toBe(0);
    }
    const replay = await runCli(['replay', join(home, 'sessions', `${id}.jsonl`)], { env: { BRIDLE_HOME: home } });
    expect(replay.stdout).toMatch(/ralph\/verdict\s+round 1 rejected by command \(exit 1\)/);
    // The second round was told what the verifier saw.
    const round2 = logs.get(`${id}.r2`)!.find((e): e is EntryOf<'user/message'> => e.kind === 'user/message')!;
    expect(round2.text).toContain("An independent verifier rejected round 1's claim of complete.");
    expect(round2.text).toContain('fail 1');
  }, 120_000);
});

it('bridle ralph refuses to run without a check of a claim (exit 2)', async () => {
  const r = await runCli(['ralph', 'anything', '--model', 'scripted:/nonexistent.json']);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/ralph checks a claim of complete before it accepts it: pass --verify/);
  const bad = await runCli(['ralph', 'anything', '--verify', 'true', '--rounds', '0']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--rounds must be a whole number from 1 to 100');
});
