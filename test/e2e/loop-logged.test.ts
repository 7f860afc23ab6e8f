/**
 * The log says which loop ran (ADR 0085), through the built CLI: a home patch replaces `loop:agent` with a
 * module; the run's `session/start` names the row, the module and its file's SHA-256; `replay --machines`
 * re-drives the log through that loop when the product still runs the same file (byte for byte), and refuses
 * by name (exit 2, one line naming the log's loop) when the product runs bridle's own loop or a changed module
 * — never a silent replay through a different loop. A base run records no loop.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Entry, EntryOf } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { tempWorld } from '../helpers/cli-world.js';
import { runCli } from '../helpers/cli.js';
import { THREE_STEPS, TWO_STEPS } from '../helpers/loop-modules.js';

let root: string;
let home: string;
let ws: string;
beforeEach(() => {
  ({ root, home, ws } = tempWorld('bridle-loop-logged-'));
  mkdirSync(home);
  writeFileSync(join(ws, 'notes.txt'), 'the answer is 42\n');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const env = () => ({ BRIDLE_HOME: home });
const sessions = () => join(home, 'sessions');
const onlyLog = (): { path: string; entries: Entry[] } => {
  const [f] = readdirSync(sessions()).filter((n) => n.endsWith('.jsonl'));
  const path = join(sessions(), f!);
  return { path, entries: parseLog(readFileSync(path, 'utf8')).entries };
};
const busyModel = () => {
  const p = join(root, 'busy.json');
  const busy = Array.from({ length: 4 }, () => ({ toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] }));
  writeFileSync(p, JSON.stringify({ label: 'scripted: busy', responses: [...busy, { text: 'done' }] }));
  return `scripted:${p}`;
};
const run = (model: string) => runCli(['run', '--model', model, '--cwd', ws, '--sandbox', 'off', '--approval', 'auto', 'go'], { env: env(), cwd: ws });
const replay = (path: string) => runCli(['replay', '--machines', path], { env: env(), cwd: ws });
const machinesLine = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('machines:'));

describe('the log says which loop ran', () => {
  it('a replaced loop is named in session/start; replay --machines runs it again with the same module, and refuses base and a changed module by name', async () => {
    const module = join(home, 'two-steps.js');
    writeFileSync(module, TWO_STEPS);
    writeFileSync(join(home, 'config.yaml'), 'patch:\n  - { id: loop:agent, use: ./two-steps.js }\n');
    const r = await run(busyModel());
    expect(r.code, r.stderr).toBe(1);
    const { path, entries } = onlyLog();
    const start = entries[0] as EntryOf<'session/start'>;
    expect(start.loop).toEqual({ row: 'loop:agent', use: module, sha256: createHash('sha256').update(TWO_STEPS).digest('hex') });
    expect(entries.filter((e) => e.kind === 'step/start')).toHaveLength(2);
    expect(verifyLog(entries).violations).toEqual([]);

    // The same product: the log's loop, loaded again, reproduces it byte for byte.
    const same = await replay(path);
    expect(same.code, same.stdout + same.stderr).toBe(0);
    expect(machinesLine(same.stdout)).toEqual([`machines: replays byte for byte (${entries.length} entries)`]);

    // A changed module at the same path: refused, naming the log's loop.
    writeFileSync(module, THREE_STEPS);
    const changed = await replay(path);
    expect(changed.code).toBe(2);
    expect(machinesLine(changed.stdout)).toEqual([expect.stringMatching(/^machines: not replayable: LOOP_MISMATCH: the log ran the loop row loop:agent, .*two-steps\.js \(sha256 [0-9a-f]{12}…\); the product's is row loop:agent, .*two-steps\.js \(sha256 [0-9a-f]{12}…\)$/)]);

    // The base product (no patch): bridle's own loop is not the log's — refused, never replayed through it.
    rmSync(join(home, 'config.yaml'));
    const base = await replay(path);
    expect(base.code).toBe(2);
    expect(machinesLine(base.stdout)).toEqual([expect.stringMatching(/^machines: not replayable: LOOP_UNAVAILABLE: the log ran the loop row loop:agent, .*two-steps\.js \(sha256 [0-9a-f]{12}…\); the product runs bridle's own loop$/)]);
    const json = await runCli(['replay', '--machines', '--json', path], { env: env(), cwd: ws });
    expect(json.code).toBe(2);
    expect((JSON.parse(json.stdout) as { machines: unknown }).machines).toMatchObject({ identical: false, code: 'LOOP_UNAVAILABLE' });
  }, 90_000);

  it(`resume goes on only in the loop the log ran: a changed module or bridle's own is refused by name (exit 2), nothing run`, async () => {
    const module = join(home, 'two-steps.js');
    writeFileSync(module, TWO_STEPS);
    writeFileSync(join(home, 'config.yaml'), 'patch:\n  - { id: loop:agent, use: ./two-steps.js }\n');
    expect((await run(busyModel())).code).toBe(1);
    const { path, entries } = onlyLog();
    const resume = () => runCli(['resume', path, 'go on'], { env: env(), cwd: ws });
    writeFileSync(module, THREE_STEPS);
    const changed = await resume();
    expect(changed.code).toBe(2);
    expect(changed.stderr).toMatch(/bridle: LOOP_MISMATCH: the log ran the loop row loop:agent, .*two-steps\.js \(sha256 [0-9a-f]{12}…\); the product's is row loop:agent, /);
    rmSync(join(home, 'config.yaml'));
    const base = await resume();
    expect(base.code).toBe(2);
    expect(base.stderr).toMatch(/bridle: LOOP_UNAVAILABLE: .*the product runs bridle's own loop/);
    expect(onlyLog().entries.filter((e) => e.kind === 'turn/start')).toHaveLength(1);
    // The same loop again: the session goes on.
    writeFileSync(module, TWO_STEPS);
    writeFileSync(join(home, 'config.yaml'), 'patch:\n  - { id: loop:agent, use: ./two-steps.js }\n');
    const same = await resume();
    expect(same.stderr).not.toMatch(/LOOP_/);
    const after = onlyLog().entries;
    expect(after.filter((e) => e.kind === 'turn/start')).toHaveLength(2);
    expect(verifyLog(after).violations).toEqual([]);
    expect(entries.length).toBeLessThan(after.length);
  }, 90_000);

  it('a loop from a profile replays with that --profile (or a --patch naming it), and is refused without', async () => {
    const bundle = join(home, 'bundles', 'short');
    mkdirSync(bundle, { recursive: true });
    writeFileSync(join(bundle, 'bundle.yaml'), 'patch:\n  - { id: loop:agent, use: ./two-steps.js }\n');
    writeFileSync(join(bundle, 'two-steps.js'), TWO_STEPS);
    writeFileSync(join(home, 'config.yaml'), 'profiles:\n  short: { bundles: [base, short] }\n');
    const r = await runCli(['run', '--profile', 'short', '--model', busyModel(), '--cwd', ws, '--sandbox', 'off', '--approval', 'auto', 'go'], { env: env(), cwd: ws });
    expect(r.code, r.stderr).toBe(1);
    const { path, entries } = onlyLog();
    expect((entries[0] as EntryOf<'session/start'>).loop).toMatchObject({ row: 'loop:agent', use: join(bundle, 'two-steps.js') });
    const plain = await replay(path);
    expect(plain.code).toBe(2);
    expect(machinesLine(plain.stdout)).toEqual([expect.stringMatching(/^machines: not replayable: LOOP_UNAVAILABLE: /)]);
    const profiled = await runCli(['replay', '--machines', '--profile', 'short', path], { env: env(), cwd: ws });
    expect(profiled.code, profiled.stdout + profiled.stderr).toBe(0);
    expect(machinesLine(profiled.stdout)).toEqual([`machines: replays byte for byte (${entries.length} entries)`]);
    const patch = join(root, 'loop.yaml');
    writeFileSync(patch, `patch:\n  - { id: loop:agent, use: ${JSON.stringify(join(bundle, 'two-steps.js'))} }\n`);
    const patched = await runCli(['replay', '--machines', '--patch', patch, path], { env: env(), cwd: ws });
    expect(patched.code, patched.stdout + patched.stderr).toBe(0);
  }, 90_000);

  it('a run on bridle\'s own loop records no loop, and replays byte for byte', async () => {
    const r = await run(busyModel());
    expect(r.code, r.stderr).toBe(0);
    const { path, entries } = onlyLog();
    expect(Object.hasOwn(entries[0]!, 'loop')).toBe(false);
    const same = await replay(path);
    expect(same.code, same.stdout + same.stderr).toBe(0);
  }, 60_000);
});
