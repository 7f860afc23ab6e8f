/**
 * Rows all the way down, the rest (course ch. 11, ADR 0077), through the built CLI: a user's bundle replaces
 * the agent loop (`loop:agent`) by id and a scripted run follows its step policy; a row's `config.model` may
 * name a module — the user's own model adapter — anchored at the file that names it and loaded like any row
 * module; a `process` child takes `model` like an in-process one, logged and priced at it.
 */
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Entry, EntryOf } from '../../log/entries.js';
import { verifyLog } from '../../log/verify.js';
import { sessionLogs, tempWorld } from '../helpers/cli-world.js';
import { CLI, runCli } from '../helpers/cli.js';

const TINY = fileURLToPath(new URL('../fixtures/model-module/tiny-model.js', import.meta.url));
const TWO_STEPS = `export default { name: 'two-steps', inject: ['machines'], provides: ['agent-loop'], apply(ctx) { ctx.provide('agent-loop', ctx.get('machines').refine({ turn: (m) => m.provide({ guards: { isAtMaxSteps: ({ context }) => context.steps >= 2 } }) }, 'two-steps')); } };\n`;
/** Beside the workspace's files: a module of the same name that must never be what runs. */
const HOSTILE = `export default { name: 'from-the-workspace', apply() { throw new Error('a module was read from the workspace'); } };\n`;

let root: string;
let home: string;
let ws: string;
beforeEach(() => {
  ({ root, home, ws } = tempWorld('bridle-loop-rows-'));
  mkdirSync(home);
  writeFileSync(join(ws, 'notes.txt'), 'the answer is 42\n');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const file = (name: string, text: string) => {
  const p = join(root, name);
  writeFileSync(p, text);
  return p;
};
const script = (name: string, responses: unknown[]) => `scripted:${file(name, JSON.stringify({ label: `scripted: ${name}`, responses }))}`;
const logs = () => sessionLogs(home);
const ofKind = <K extends Entry['kind']>(log: readonly Entry[], kind: K) => log.filter((e): e is EntryOf<K> => e.kind === kind);
const env = () => ({ BRIDLE_HOME: home });

describe('the agent loop as a row, by configuration alone', () => {
  it("a user bundle replacing loop:agent changes a scripted run's step policy; its module is the bundle's, never the workspace's", async () => {
    const bundle = join(home, 'bundles', 'short');
    mkdirSync(bundle, { recursive: true });
    writeFileSync(join(bundle, 'bundle.yaml'), 'patch:\n  - { id: loop:agent, use: ./two-steps.js }\n');
    writeFileSync(join(bundle, 'two-steps.js'), TWO_STEPS);
    writeFileSync(join(ws, 'two-steps.js'), HOSTILE);
    writeFileSync(join(home, 'config.yaml'), 'profiles:\n  short: { bundles: [base, short] }\n');
    const busy = Array.from({ length: 4 }, () => ({ toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] }));
    const model = script('busy.json', [...busy, { text: 'done' }]);
    const args = ['run', '--model', model, '--cwd', ws, '--sandbox', 'off', '--approval', 'auto', 'go'];

    const dumped = await runCli(['config', '--dump', '--json', '--profile', 'short'], { env: env(), cwd: ws });
    expect(dumped.code, dumped.stderr).toBe(0);
    expect((JSON.parse(dumped.stdout) as { rows: { id: string }[] }).rows.find((r) => r.id === 'loop:agent')).toMatchObject({ use: join(bundle, 'two-steps.js'), from: 'bundle short' });

    const short = await runCli([...args.slice(0, 1), '--profile', 'short', ...args.slice(1)], { env: env(), cwd: ws });
    expect(short.code, short.stderr).toBe(1);
    const [log] = [...logs().values()];
    expect(ofKind(log!, 'step/start')).toHaveLength(2);
    expect(ofKind(log!, 'turn/end')).toMatchObject([{ reason: 'max-steps' }]);
    expect(verifyLog(log!).violations).toEqual([]);

    // The same run on the base loop: the turn row's limit (100) is far off, the script runs to its end.
    rmSync(join(home, 'sessions'), { recursive: true });
    const plain = await runCli(args, { env: env(), cwd: ws });
    expect(plain.code, plain.stderr).toBe(0);
    const [base] = [...logs().values()];
    expect(ofKind(base!, 'step/start')).toHaveLength(5);
    expect(ofKind(base!, 'turn/end')).toMatchObject([{ reason: 'completed' }]);
  }, 60_000);
});

describe("a module path in a row's config.model", () => {
  it('is anchored at the patch file that names it and loaded: the child runs on the user\'s own model adapter', async () => {
    const parent = script('parent.json', [{ toolCalls: [{ name: 'delegate', arguments: { task: 'Explore.', provider: 'explore' } }] }, { text: 'The explorer said its piece.' }]);
    const use = `./${relative(root, TINY)}`;
    const patch = file('patch.yaml', `patch:\n  - { insert: true, id: subagent:explore, use: spawn, config: { model: { use: ${JSON.stringify(use)}, config: { name: gpt-4o-mini, text: tiny explorer report } } } }\n`);
    const dumped = await runCli(['config', '--dump', '--json', '--patch', patch], { env: env(), cwd: ws });
    expect(dumped.code, dumped.stderr).toBe(0);
    expect((JSON.parse(dumped.stdout) as { rows: { id: string }[] }).rows.find((r) => r.id === 'subagent:explore')).toMatchObject({ config: { model: { use: TINY } } });

    const r = await runCli(['run', '--model', parent, '--cwd', ws, '--sandbox', 'off', '--approval', 'auto', '--max-depth', '1', '--patch', patch, 'go'], { env: env(), cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    const [[, p], [, child]] = [...logs().entries()] as [[string, Entry[]], [string, Entry[]]];
    expect(child[0]).toMatchObject({ kind: 'session/start', model: 'gpt-4o-mini', depth: 1 });
    expect(ofKind(p, 'subagent/start')).toMatchObject([{ mode: 'explore', model: 'gpt-4o-mini' }]);
    expect(ofKind(p, 'tool/result').find((e) => e.name === 'delegate')).toMatchObject({ status: 'ok', content: expect.stringContaining('tiny explorer report') });
  }, 60_000);

  it('a module that is not there is refused before anything runs, naming the row (exit 2)', async () => {
    const patch = file('patch.yaml', 'patch:\n  - { id: tool:delegate, use: delegate, config: { model: { use: ./nowhere.js } } }\n');
    const r = await runCli(['run', '--model', script('p.json', [{ text: 'x' }]), '--cwd', ws, '--patch', patch, 'go'], { env: env(), cwd: ws });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`cannot load plugin module ${join(root, 'nowhere.js')}`);
  });
});

describe('row modules inside the workspace', () => {
  it('are refused before they are imported, naming the row (exit 2): the agent can write there', async () => {
    writeFileSync(join(ws, 'model.js'), HOSTILE);
    const model = script('p.json', [{ text: 'x' }]);
    for (const row of [`{ id: tool:delegate, use: delegate, config: { model: { use: ${join(ws, 'model.js')} } } }`, `{ insert: true, id: tool:mine, use: ${join(ws, 'model.js')} }`]) {
      const patch = file('patch.yaml', `patch:\n  - ${row}\n`);
      const r = await runCli(['run', '--model', model, '--cwd', ws, '--sandbox', 'off', '--patch', patch, 'go'], { env: env(), cwd: ws });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/row (tool:delegate|tool:mine) \(patch .*\): module .*model\.js is inside the workspace/);
      expect(r.stderr).not.toContain('a module was read from the workspace');
    }
  });
});

describe('a process child takes model', () => {
  it("the process row's model reaches the child: logged in its session/start and the parent's subagent/start, its spend priced at it", async () => {
    const parent = script('parent.json', [{ toolCalls: [{ name: 'delegate', arguments: { task: 'What do the notes say?', provider: 'process' } }] }, { text: 'The child process answered.' }]);
    copyFileSync(TINY, join(root, 'tiny-model.js'));
    const patch = file('patch.json', JSON.stringify({ patch: [{ insert: true, id: 'subagent:process', use: 'process', config: { bridle: CLI, model: { use: './tiny-model.js', config: { name: 'gpt-4o-mini', text: 'the notes say 42' } } } }] }));
    const r = await runCli(['run', '--model', parent, '--cwd', ws, '--sandbox', 'off', '--approval', 'auto', '--max-depth', '1', '--budget', 'usd=5', '--patch', patch, 'ask a child'], { env: env(), cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    const [[, p], [, child]] = [...logs().entries()] as [[string, Entry[]], [string, Entry[]]];
    expect(child[0]).toMatchObject({ kind: 'session/start', model: 'gpt-4o-mini', depth: 1 });
    expect(ofKind(p, 'subagent/start')).toMatchObject([{ mode: 'process', model: 'gpt-4o-mini' }]);
    // 1000 input and 100 output tokens at gpt-4o-mini's list price: the child's spend, in the parent's subagent/end.
    expect(ofKind(p, 'subagent/end')[0]!.usage!.usd).toBeCloseTo((1000 * 0.15 + 100 * 0.6) / 1_000_000, 10);
    expect(ofKind(p, 'tool/result').find((e) => e.name === 'delegate')).toMatchObject({ status: 'ok', content: expect.stringContaining('the notes say 42') });
    for (const log of [p, child]) expect(verifyLog(log).violations).toEqual([]);
  }, 60_000);

  it('a model id crosses as --model, without args', async () => {
    const parent = script('parent.json', [{ toolCalls: [{ name: 'delegate', arguments: { task: 'Read the notes.', provider: 'process' } }] }, { text: 'ok' }]);
    const childModel = script('child.json', [{ text: 'The notes say 42.' }]);
    const patch = file('patch.json', JSON.stringify({ patch: [{ insert: true, id: 'subagent:process', use: 'process', config: { bridle: CLI, model: childModel } }] }));
    const r = await runCli(['run', '--model', parent, '--cwd', ws, '--sandbox', 'off', '--approval', 'auto', '--max-depth', '1', '--patch', patch, 'go'], { env: env(), cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    const [[, p], [, child]] = [...logs().entries()] as [[string, Entry[]], [string, Entry[]]];
    expect(child[0]).toMatchObject({ kind: 'session/start', model: childModel });
    expect(ofKind(p, 'subagent/start')).toMatchObject([{ mode: 'process', model: childModel }]);
  }, 60_000);
});
