/**
 * `bridle eval` as a user runs it (the built CLI): the shipped tasks with
 * their scripted answers, one log per run, the table labelled scripted, the
 * checks telling a fixed workspace from an untouched one, `--replay`
 * re-scoring the same logs to the same figures without a model, and the
 * table in docs/evals.md being what the command prints.
 */
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyFile } from '../../cli/verify-log.js';
import type { RunRecord, TaskSummary } from '../../cli/eval/score.js';
import { runCli } from '../helpers/cli.js';
import { describeWithSystemDep, findCommand, SYSTEM_DEPS } from '../helpers/system-deps.js';
import { tempDir } from '../helpers/temp.js';

const tasksDir = fileURLToPath(new URL('../../examples/evals', import.meta.url));
const readme = readFileSync(new URL('../../docs/evals.md', import.meta.url), 'utf8');
const root = realpathSync(tempDir('bridle-eval-e2e-'));
/** Workspaces `--keep` left beside root. */
const kept: string[] = [];
afterAll(() => {
  for (const k of kept) rmSync(k, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
});
// The shipped tasks' commands run in bwrap where there is one; elsewhere unconfined, on the throwaway copies (as `npm start` does).
const sandbox = findCommand('bwrap', process.env) ? 'bwrap' : 'off';

let homes = 0;
function home(): string {
  const h = join(root, `home-${++homes}`);
  mkdirSync(h);
  return h;
}
const evalCli = (args: string[], h: string) => runCli(['eval', ...args, '--sandbox', sandbox], { env: { BRIDLE_HOME: h }, timeoutMs: 120_000 });
interface EvalJson {
  mode: string;
  eval?: string;
  tasks: TaskSummary[];
  runs: RunRecord[];
}

/** docs/evals.md's table rows (between its eval markers), less the time column, which is wall time. */
function readmeRows(): string[] {
  const block = readme.slice(readme.indexOf('<!-- eval:table -->'), readme.indexOf('<!-- /eval:table -->'));
  return block.split('\n').filter((l) => /^(task|cart-remove|flaky-checkout) /.test(l)).map((l) => l.replace(/\s+\S+ s$|\s+time$/, ''));
}

describe('bridle eval', () => {
  it('bridle eval prints its table for the shipped tasks: labelled scripted, one log per run, the figures of docs/evals.md', { timeout: 120_000 }, async () => {
    const h = home();
    const r = await evalCli([tasksDir, '--model', 'scripted', '--runs', '3'], h);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("model: scripted — each task's scripted.json (canned answers, not a model)");
    const table = r.stdout.split('\n\n')[0]!.split('\n');
    expect(table[0]).toMatch(/^task\s+model\s+passes\s+steps\s+tokens\s+time$/);
    expect(table.slice(1).map((l) => l.split(/\s+/).slice(0, 3))).toEqual([
      ['cart-remove', 'scripted', '3/3'],
      ['flaky-checkout', 'scripted', '3/3'],
    ]);
    expect(r.stdout).toContain('scripted: canned answers from a script file, not a model');
    // Every number docs/evals.md shows but time (wall time) is this command's.
    expect(table.map((l) => l.replace(/\s+\S+ s$|\s+time$/, ''))).toEqual(readmeRows());
    const logs = readdirSync(join(h, 'sessions')).filter((f) => f.endsWith('.jsonl')).sort();
    expect(logs.map((f) => f.split('.').slice(1, 3).join('.'))).toEqual(['cart-remove.1', 'cart-remove.2', 'cart-remove.3', 'flaky-checkout.1', 'flaky-checkout.2', 'flaky-checkout.3']);
    for (const f of logs) expect(verifyFile(join(h, 'sessions', f)).verdict.ok).toBe(true);
  });

  it('--json, --keep; then --replay re-scores the same logs to the same figures, re-running checks in the kept workspaces', { timeout: 120_000 }, async () => {
    const h = home();
    const r = await evalCli([tasksDir, '--model', 'scripted', '--keep', '--json'], h);
    expect(r.code, r.stderr).toBe(0);
    const live = JSON.parse(r.stdout) as EvalJson;
    kept.push(...live.runs.flatMap((x) => (x.workspace ? [x.workspace] : [])));
    expect(live.runs).toHaveLength(2);
    for (const run of live.runs) {
      expect(run).toMatchObject({ scripted: true, outcome: 'completed', check: { passed: true, exitCode: 0 } });
      expect(existsSync(run.workspace!)).toBe(true);
      const { entries } = verifyFile(run.log);
      expect(run.steps).toBe(entries.flatMap((e) => (e.kind === 'turn/end' ? [e.steps] : [])).reduce((a, b) => a + b, 0));
      expect(entries[0]).toMatchObject({ kind: 'session/start', cwd: run.workspace });
    }
    expect(live.tasks.map((t) => [t.task, t.passes, t.runs])).toEqual([['cart-remove', 1, 1], ['flaky-checkout', 1, 1]]);

    const logs = live.runs.map((x) => x.log);
    const again = await evalCli([tasksDir, '--replay', ...logs, '--json'], h);
    expect(again.code, again.stderr).toBe(0);
    const re = JSON.parse(again.stdout) as EvalJson;
    expect(re.mode).toBe('replay');
    expect(re.tasks).toEqual(live.tasks);
    const figures = (x: RunRecord) => ({ task: x.task, run: x.run, steps: x.steps, tokens: x.tokens, ms: x.ms, outcome: x.outcome, passed: x.check?.passed });
    expect(re.runs.map(figures)).toEqual(live.runs.map(figures));

    // Without the task set, the same figures, and no run counted as passed or failed.
    const bare = await evalCli(['--replay', ...logs], h);
    expect(bare.code, bare.stderr).toBe(0);
    expect(bare.stdout).toMatch(/^re-scored 2 logs: no model called, no tool run/);
    expect(bare.stdout).toMatch(/^cart-remove\s+scripted\s+not checked \(1\)/m);
    expect(bare.stdout).toContain('cart-remove run 1: not checked: no task set named');
    for (const run of live.runs) rmSync(run.workspace!, { recursive: true, force: true });
    const gone = await evalCli([tasksDir, '--replay', logs[0]!], h);
    expect(gone.stdout).toContain('not checked: its workspace is gone (eval --keep keeps it)');
  });

  it('the checks tell a fixed workspace from an untouched one: a script that changes nothing passes neither task (exit 1)', { timeout: 60_000 }, async () => {
    const h = home();
    const idle = join(root, 'idle.json');
    writeFileSync(idle, JSON.stringify({ label: 'scripted: does nothing', responses: [{ text: 'Nothing to do.' }] }));
    const r = await evalCli([tasksDir, '--model', `scripted:${idle}`, '--json'], h);
    expect(r.code, r.stderr).toBe(1);
    const out = JSON.parse(r.stdout) as EvalJson;
    expect(out.tasks.map((t) => [t.task, t.model, t.passes, t.runs])).toEqual([['cart-remove', 'scripted', 0, 1], ['flaky-checkout', 'scripted', 0, 1]]);
    expect(out.runs.find((x) => x.task === 'flaky-checkout')!.check!.output).toMatch(/tests 4, pass \d, fail [1-4] /);
  });

  it('a log that does not verify is named and not scored (exit 2); a live model with no key runs nothing (exit 1)', async () => {
    const h = home();
    const bad = join(root, 'bad.jsonl');
    writeFileSync(bad, '{"seq":2,"at":"2026-01-01T00:00:00.000Z","kind":"turn/start","turn":"t1","input":"x"}\n');
    const r = await evalCli(['--replay', bad], h);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/bad\.jsonl does not verify \(.*\); not scored/);
    const live = await evalCli([tasksDir, '--model', 'gpt-test'], h);
    expect(live.code).toBe(1);
    expect(live.stderr).toMatch(/OPENAI_API_KEY/);
    expect(existsSync(join(h, 'sessions')) ? readdirSync(join(h, 'sessions')) : []).toEqual([]);
  });

  it("a task whose workspace is /etc or outside the task set is refused naming the path (exit 2), nothing copied; --workspace-root lets one in", async () => {
    const h = home();
    const set = join(root, 'foreign-set');
    const secret = join(root, 'foreign-secret');
    mkdirSync(secret, { recursive: true });
    writeFileSync(join(secret, 'id_rsa'), 'PRIVATE KEY');
    for (const [name, workspace] of [['etc', '/etc'], ['up', '../../foreign-secret']] as const) {
      mkdirSync(join(set, name), { recursive: true });
      writeFileSync(join(set, name, 'task.json'), JSON.stringify({ prompt: 'p', check: 'true', workspace }));
      writeFileSync(join(set, name, 'scripted.json'), JSON.stringify({ responses: [{ text: 'done' }] }));
      const r = await evalCli([join(set, name), '--model', 'scripted'], h);
      expect(r.code, name).toBe(2);
      expect(r.stderr, name).toContain(`${name}/task.json: workspace: ${name === 'etc' ? '/etc' : secret} is outside the folders a task may copy from`);
    }
    expect(existsSync(join(h, 'sessions')) ? readdirSync(join(h, 'sessions')) : []).toEqual([]);
    const trusted = await evalCli([join(set, 'up'), '--model', 'scripted', '--workspace-root', secret], h);
    expect(trusted.code, trusted.stderr).toBe(0);
  });
});

describeWithSystemDep('bridle eval runs the check in the sandbox `run` uses', SYSTEM_DEPS.bwrap, () => {
  it('the same check passes confined (bwrap: / is read-only) and fails unconfined (--sandbox off), where this user could write /', { timeout: 60_000 }, async () => {
    const dir = join(root, 'probe');
    mkdirSync(join(dir, 'workspace'), { recursive: true });
    writeFileSync(join(dir, 'task.json'), JSON.stringify({ prompt: 'say hi', check: 'f=/bridle-eval-probe-$$; if touch "$f" 2>/dev/null; then rm -f "$f"; exit 1; fi' }));
    const hi = join(root, 'hi.json');
    writeFileSync(hi, JSON.stringify({ responses: [{ text: 'hi' }] }));
    let rootWritable = true;
    try {
      accessSync('/', constants.W_OK);
    } catch {
      rootWritable = false;
    }
    const confined = await runCli(['eval', dir, '--model', `scripted:${hi}`, '--sandbox', 'bwrap', '--json'], { env: { BRIDLE_HOME: home() } });
    expect(confined.code, confined.stderr).toBe(0);
    const off = await runCli(['eval', dir, '--model', `scripted:${hi}`, '--sandbox', 'off', '--json'], { env: { BRIDLE_HOME: home() } });
    expect(off.code).toBe(rootWritable ? 1 : 0);
  });
});
