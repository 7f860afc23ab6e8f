/**
 * `$BRIDLE_HOME/config.yaml` through the built CLI: `config --dump` tells
 * where each value came from; run, chat, resume and serve honour the file and
 * its profiles under flags and the environment; a bad file is one line, exit
 * 2; a config.yaml in the workspace is never read.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Entry, EntryOf } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { tempWorld } from '../helpers/cli-world.js';
import { CLI, runCli } from '../helpers/cli.js';

let root: string;
let home: string;
let ws: string;
let script: string;
beforeEach(() => {
  ({ root, home, ws } = tempWorld('bridle-config-e2e-'));
  mkdirSync(home);
  script = join(root, 'hello.json');
  // Every answer lists the directory, so only the step budget ends the turn.
  writeFileSync(script, JSON.stringify({ label: 'scripted: config e2e', responses: Array.from({ length: 6 }, () => ({ text: 'looking', toolCalls: [{ name: 'list_dir' }] })) }));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const config = (text: string) => writeFileSync(join(home, 'config.yaml'), text);
const env = (extra: NodeJS.ProcessEnv = {}) => ({ BRIDLE_HOME: home, ...extra });
const sessionFiles = (): string[] => {
  try {
    return readdirSync(join(home, 'sessions'));
  } catch {
    return [];
  }
};
const readLog = (f: string): Entry[] => parseLog(readFileSync(join(home, 'sessions', f), 'utf8')).entries;
/** Runs the CLI and reads the one log it created (ids sort by the second they began in, so order is found by difference). */
async function runWithLog(args: string[], opts: Parameters<typeof runCli>[1]): Promise<{ r: Awaited<ReturnType<typeof runCli>>; log: Entry[] }> {
  const before = new Set(sessionFiles());
  const r = await runCli(args, opts);
  const made = sessionFiles().filter((f) => !before.has(f));
  expect(made, r.stderr).toHaveLength(1);
  return { r, log: readLog(made[0]!) };
}
const turnEnd = (log: Entry[]) => log.filter((e): e is EntryOf<'turn/end'> => e.kind === 'turn/end').at(-1);

describe('bridle config', () => {
  it('--dump prints each row with the layer it came from; --json is the same as JSON', async () => {
    config(`model: gpt-4o\napproval: never\nmaxSteps: 30\nprofiles:\n  quick:\n    maxSteps: 4\n    allow: ["bash:^ls$"]\n`);
    const r = await runCli(['config', '--dump', '--profile', 'quick', '--approval', 'auto'], { env: env({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' }) });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`# config file: ${join(home, 'config.yaml')}\n# profile: quick\n`);
    expect(r.stdout).toContain('# from: env\n  - id: model\n    use: openai-chat\n    config:\n      model: gpt-4o\n      baseUrl: http://127.0.0.1:1/v1\n');
    expect(r.stdout).toContain('# from: flag\n  - id: approval\n    use: policy\n    config:\n      policy: auto\n      rules:\n        - bash:^ls$\n');
    expect(r.stdout).toContain('# from: profile quick\n  - id: turn\n    use: limits\n    config:\n      maxSteps: 4\n');
    expect(r.stdout).toContain('# from: bundle base\n  - id: sandbox\n    use: bwrap\n');
    const j = await runCli(['config', '--dump', '--json', '--profile', 'quick'], { env: env({ BRIDLE_MODEL: 'from-env' }) });
    expect(j.code).toBe(0);
    const d = JSON.parse(j.stdout);
    const row = (id: string) => d.rows.find((x: { id: string }) => x.id === id);
    expect(row('model')).toMatchObject({ use: 'openai-chat', config: { model: 'from-env' }, from: 'env' });
    expect(row('turn')).toEqual({ id: 'turn', use: 'limits', config: { maxSteps: 4 }, from: 'profile quick' });
    expect(row('approval')).toMatchObject({ config: { policy: 'never', rules: ['bash:^ls$'] }, from: 'profile quick' });
  });

  it('without --dump it checks the file', async () => {
    const missing = await runCli(['config'], { env: env() });
    expect([missing.code, missing.stdout]).toEqual([0, expect.stringContaining('(not found)')]);
    config('maxSteps: 3\n');
    expect((await runCli(['config'], { env: env() })).stdout).toContain('(valid)');
  });

  it('a bad file is one line naming the file, the key and the problem, exit 2, for every command that reads it', async () => {
    config('maxSteps: 3\nsandbox: maybe\n');
    const line = `bridle: ${join(home, 'config.yaml')}: sandbox: must be bwrap or off (got "maybe")\n`;
    for (const args of [['config', '--dump'], ['config'], ['run', '--model', `scripted:${script}`, 'hi'], ['chat'], ['serve', '--port', '0'], ['resume', 'nope']]) {
      const r = await runCli(args, { env: env() });
      expect([args[0], r.code, r.stderr]).toEqual([args[0], 2, line]);
    }
    config('modle: gpt-4o\n');
    const r = await runCli(['run', 'hi'], { env: env() });
    expect(r.stderr).toMatch(/^bridle: .*config\.yaml: modle: unknown key \(known: model, /);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('an unknown profile is a usage error naming the ones there are', async () => {
    config('profiles:\n  a: {}\n  b: {}\n');
    const r = await runCli(['run', '--profile', 'c', 'hi'], { env: env() });
    expect([r.code, r.stderr]).toEqual([2, `bridle: --profile c: no such profile in ${join(home, 'config.yaml')}; profiles: a, b\n`]);
  });
});

describe('sessions honour the config', () => {
  it('run: model, approval, sandbox and maxSteps from the file; a profile over the file; a flag over both', async () => {
    config(`model: scripted:${script}\napproval: auto\nsandbox: "off"\nmaxSteps: 2\nprofiles:\n  one: { maxSteps: 1 }\n`);
    const { r: fromFile, log: a } = await runWithLog(['run', '--cwd', ws, 'look'], { env: env() });
    expect(fromFile.stderr).toContain('approval: auto');
    expect(fromFile.stderr).toContain('model: scripted: config e2e');
    const { r: fromProfile, log: b } = await runWithLog(['run', '--cwd', ws, '--profile', 'one', 'look'], { env: env() });
    const { r: fromFlag, log: c } = await runWithLog(['run', '--cwd', ws, '--profile', 'one', '--max-steps', '3', 'look'], { env: env() });
    expect([fromFile.code, fromProfile.code, fromFlag.code]).toEqual([1, 1, 1]);
    expect(a[0]).toMatchObject({ kind: 'session/start', model: `scripted:${script}` });
    expect([turnEnd(a), turnEnd(b), turnEnd(c)].map((t) => [t?.reason, t?.steps])).toEqual([
      ['max-steps', 2],
      ['max-steps', 1],
      ['max-steps', 3],
    ]);
    // Approval auto and no sandbox: the calls ran.
    expect(a.some((e) => e.kind === 'tool/dispatch')).toBe(true);
  });

  it('BRIDLE_MODEL beats the file; --model beats BRIDLE_MODEL', async () => {
    config('model: scripted:/nowhere.json\nsandbox: "off"\napproval: auto\nmaxSteps: 1\n');
    const r = await runCli(['run', '--cwd', ws, 'look'], { env: env({ BRIDLE_MODEL: `scripted:${script}` }) });
    expect(r.stderr).toContain('model: scripted: config e2e');
    const bad = await runCli(['run', '--cwd', ws, '--model', 'scripted:/also-nowhere.json', 'look'], { env: env({ BRIDLE_MODEL: `scripted:${script}` }) });
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('also-nowhere.json')]);
  });

  it('a config.yaml in the workspace is never read', async () => {
    writeFileSync(join(ws, 'config.yaml'), 'approval: auto\nsandbox: "off"\nbogus: true\n');
    const r = await runCli(['config', '--dump', '--json'], { env: env(), cwd: ws });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).rows.find((x: { id: string }) => x.id === 'approval')).toEqual({ id: 'approval', use: 'policy', config: { policy: 'ask', rules: [] }, from: 'bundle base' });
  });

  it('chat takes its model from the file', async () => {
    config(`model: scripted:${script}\napproval: auto\nsandbox: "off"\nmaxSteps: 1\n`);
    const { r, log } = await runWithLog(['chat', '--cwd', ws], { env: env(), input: 'look\n' });
    expect(r.code).toBe(0);
    expect(turnEnd(log)).toMatchObject({ reason: 'max-steps', steps: 1 });
  });

  it('resume keeps the logged model over the file\'s, and takes maxSteps from it', async () => {
    config(`model: scripted:${script}\napproval: auto\nsandbox: "off"\nmaxSteps: 1\n`);
    await runCli(['run', '--cwd', ws, 'look'], { env: env() });
    const [first] = sessionFiles();
    config(`model: scripted:/nowhere.json\napproval: auto\nsandbox: "off"\nmaxSteps: 2\n`);
    const r = await runCli(['resume', first!.replace(/\.jsonl$/, ''), 'again'], { env: env() });
    expect(r.stderr).not.toContain('nowhere');
    const log = readLog(first!);
    expect(turnEnd(log)).toMatchObject({ turn: 't2', reason: 'max-steps', steps: 2 });
  });

  it('serve takes approval from the file', async () => {
    config('approval: never\nsandbox: "off"\n');
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0'], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env() } });
    try {
      const err = await new Promise<string>((resolve, reject) => {
        let text = '';
        const timer = setTimeout(() => reject(new Error(`serve did not start: ${text}`)), 15_000);
        child.stderr.on('data', (d) => {
          text += d;
          if (/^approval: /m.test(text)) {
            clearTimeout(timer);
            resolve(text);
          }
        });
      });
      expect(err).toMatch(/^approval: never$/m);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
