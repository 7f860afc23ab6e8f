/**
 * `bridle run --max-depth 1` with a model that writes workflows: a parallel +
 * pipeline script whose agents are logged subagents (each a log of its own
 * beside the parent's), then a script that returns a function, which fails
 * with WORKFLOW_RESULT_NOT_SERIALIZABLE while the session carries on.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Entry, EntryOf } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const SCRIPT = `
const [a, b] = await parallel([() => agent('survey module a'), () => agent('survey module b')]);
const fixes = await pipeline(['x', 'y'], (f) => agent('diagnose ' + f), (d) => agent('fix: ' + d));
return { surveys: [a, b], fixes };`;

describe('bridle run with the workflow tool', () => {
  it('runs a parallel + pipeline script whose children are logged subagents, and a script returning a function fails with WORKFLOW_RESULT_NOT_SERIALIZABLE', async () => {
    const root = tempDir('bridle-wf-');
    const home = join(root, 'home');
    const ws = join(root, 'ws');
    mkdirSync(ws);
    const script = join(root, 'script.json');
    writeFileSync(
      script,
      JSON.stringify({
        label: 'scripted: a model that orchestrates (its subagents answer by task, in whatever order they ask)',
        responses: [
          { toolCalls: [{ name: 'workflow', arguments: { script: SCRIPT } }] },
          { match: 'survey module a', text: 'module a: no flaky tests' },
          { match: 'survey module b', text: 'module b: one flaky test' },
          { match: 'diagnose x', text: 'x races on the clock' },
          { match: 'diagnose y', text: 'y leaks a timer' },
          { match: 'fix: x races', text: 'x: injected the clock' },
          { match: 'fix: y leaks', text: 'y: cleared the timer' },
          { toolCalls: [{ name: 'workflow', arguments: { script: 'return function () {};' } }] },
          { text: 'Surveyed both modules, fixed x and y; my second script returned a function, which is not a result.' },
        ],
      }),
    );
    const r = await runCli(['run', '--model', `scripted:${script}`, '--cwd', ws, '--sandbox', 'off', '--max-depth', '1', 'orchestrate the fixes'], { env: { BRIDLE_HOME: home } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('fixed x and y');
    const dir = join(home, 'sessions');
    const files = readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort((a, b) => a.length - b.length);
    const read = (f: string): Entry[] => parseLog(readFileSync(join(dir, f), 'utf8')).entries;
    const parent = read(files[0]!);
    const id = (parent[0] as EntryOf<'session/start'>).id;
    expect(files.slice(1).sort()).toEqual([1, 2, 3, 4, 5, 6].map((i) => `${id}.t1.s1.c1.a${i}.jsonl`));
    const results = parent.filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result');
    expect(JSON.parse(results[0]!.content)).toEqual({ surveys: ['module a: no flaky tests', 'module b: one flaky test'], fixes: ['x: injected the clock', 'y: cleared the timer'] });
    expect(results[1]).toMatchObject({ status: 'error', code: 'WORKFLOW_RESULT_NOT_SERIALIZABLE' });
    expect(parent.filter((e) => e.kind === 'subagent/start')).toHaveLength(6);
    for (const f of files) expect(verifyLog(read(f)).violations, f).toEqual([]);
    for (const f of files.slice(1)) expect(read(f)[0]).toMatchObject({ kind: 'session/start', depth: 1, parent: id });
    const replay = await runCli(['replay', join(dir, files[0]!), '--machines'], { env: { BRIDLE_HOME: home } });
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
  }, 60_000);

  it('a script that reaches for child_process, import(), process.binding or /proc/self/environ under --approval never gets no such power: nothing runs, no file outside the workspace, no API key in any log', async () => {
    const root = tempDir('bridle-wf-iso-');
    const home = join(root, 'home');
    const ws = join(root, 'ws');
    mkdirSync(ws);
    const marker = join(root, 'outside-the-workspace');
    const key = 'sk-fake-workflow-isolation-0123456789';
    const attempts = [
      `process.getBuiltinModule('child_process').execSync('id > ${marker}'); return 'ran';`,
      `const cp = await import('node:child_process'); cp.execSync('id > ${marker}'); return 'ran';`,
      `process.binding('spawn_sync').spawn({ file: '/bin/sh', args: ['/bin/sh', '-c', 'id > ${marker}'], envPairs: [], stdio: [{ type: 'ignore' }, { type: 'ignore' }, { type: 'ignore' }] }); return 'spawned';`,
      `return process.getBuiltinModule('fs').readFileSync('/proc/self/environ', 'latin1');`,
    ];
    const script = join(root, 'script.json');
    writeFileSync(
      script,
      JSON.stringify({
        label: 'scripted: a model whose workflows reach for the host',
        responses: [...attempts.map((a) => ({ toolCalls: [{ name: 'workflow', arguments: { script: a } }] })), { text: 'none of that worked' }],
      }),
    );
    const r = await runCli(['run', '--model', `scripted:${script}`, '--cwd', ws, '--sandbox', 'off', '--approval', 'never', '--max-depth', '1', 'break out'], { env: { BRIDLE_HOME: home, OPENAI_API_KEY: key } });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(marker)).toBe(false);
    const dir = join(home, 'sessions');
    const files = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
    expect(files).toHaveLength(1);
    const text = readFileSync(join(dir, files[0]!), 'utf8');
    expect(text).not.toContain(key);
    expect(r.stdout + r.stderr).not.toContain(key);
    const results = parseLog(text).entries.filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result');
    expect(results.map((x) => [x.status, x.code])).toEqual(attempts.map(() => ['error', 'WORKFLOW_SCRIPT_ERROR']));
  }, 60_000);
});
