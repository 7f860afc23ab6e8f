/**
 * The product as rows, through the built CLI: `config --dump` shows the base
 * bundle's rows and where each came from, patches from the home config and
 * from `--patch` replace rows, insert and remove them, an unmatched id only
 * warns, a `disabled` predicate drops a row, bad rows are one line, exit 2 —
 * and what the rows say is what a session runs: `fs: memory` keeps the disk
 * untouched, a user plugin's tool can be called.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Entry, EntryOf } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { base } from '../../bundles/base.js';
import { tempWorld } from '../helpers/cli-world.js';
import { runCli } from '../helpers/cli.js';

let root: string;
let home: string;
let ws: string;
beforeEach(() => {
  ({ root, home, ws } = tempWorld('bridle-rows-e2e-'));
  mkdirSync(home);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const env = (extra: NodeJS.ProcessEnv = {}) => ({ BRIDLE_HOME: home, ...extra });
const homeConfig = (text: string) => writeFileSync(join(home, 'config.yaml'), text);
const file = (name: string, text: string) => {
  const p = join(root, name);
  writeFileSync(p, text);
  return p;
};
const script = (responses: unknown[]) => `scripted:${file('script.json', JSON.stringify({ label: 'scripted: rows e2e', responses }))}`;
interface Dumped {
  rows: { id: string; use: string; config?: unknown; from: string; disabled?: unknown; rows?: Dumped['rows'] }[];
  warnings: string[];
}
const dump = async (args: string[] = [], extra: NodeJS.ProcessEnv = {}) => {
  const r = await runCli(['config', '--dump', '--json', ...args], { env: env(extra) });
  return { r, d: r.code === 0 ? (JSON.parse(r.stdout) as Dumped) : undefined };
};
const row = (d: Dumped | undefined, id: string) => d?.rows.find((x) => x.id === id);
const onlyLog = (): Entry[] => {
  const dir = join(home, 'sessions');
  const [f] = readdirSync(dir).filter((n) => n.endsWith('.jsonl'));
  return parseLog(readFileSync(join(dir, f!), 'utf8')).entries;
};
const results = (log: Entry[]) => log.filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result');

describe('bridle config --dump: the composed rows and their sources', () => {
  it('config --dump --json shows the base bundle’s rows with their sources', async () => {
    const { r, d } = await dump();
    expect(r.code, r.stderr).toBe(0);
    expect(d!.rows.map((x) => x.id)).toEqual(base.rows.map((x) => x.id));
    expect(new Set(d!.rows.map((x) => x.from))).toEqual(new Set(['bundle base']));
    // Every row's config is shown with its provider's defaults filled in: the one place they live.
    expect(row(d, 'approval')).toEqual({ id: 'approval', use: 'policy', config: { policy: 'ask', rules: [] }, from: 'bundle base' });
    expect(row(d, 'turn')).toEqual({ id: 'turn', use: 'limits', config: { maxSteps: 100 }, from: 'bundle base' });
    expect(d!.warnings).toEqual([]);
  });

  it('a home patch that replaces model and a --patch overlay that replaces sandbox both show with the right from', async () => {
    homeConfig('patch:\n  - { id: model, use: scripted, config: { file: /scripts/a.json } }\n');
    const overlay = file('overlay.yaml', 'patch:\n  - { id: sandbox, use: "off" }\n');
    const { r, d } = await dump(['--patch', overlay]);
    expect(r.code, r.stderr).toBe(0);
    expect(row(d, 'model')).toEqual({ id: 'model', use: 'scripted', config: { file: '/scripts/a.json' }, from: 'home' });
    expect(row(d, 'sandbox')).toEqual({ id: 'sandbox', use: 'off', config: {}, from: `patch ${overlay}` });
    // A flag is a layer too, the last.
    const flagged = await dump(['--patch', overlay, '--sandbox', 'bwrap']);
    expect(row(flagged.d, 'sandbox')).toMatchObject({ use: 'bwrap', from: 'flag' });
    // The YAML form says the same in comments.
    const yaml = await runCli(['config', '--dump', '--patch', overlay], { env: env() });
    expect(yaml.stdout).toContain(`# from: patch ${overlay}\n  - id: sandbox\n    use: off\n`);
    expect(yaml.stdout).toContain('# from: home\n  - id: model\n    use: scripted\n');
  });

  it('an unmatched id in a replace only warns, on stderr and in the dump, and exits 0', async () => {
    const overlay = file('typo.yaml', 'patch:\n  - { id: modle, use: scripted, config: { file: x.json } }\n');
    const { r, d } = await dump(['--patch', overlay]);
    expect(r.code).toBe(0);
    const warning = `patch ${overlay}: replace of row modle, which no earlier layer has; ignored (to add it, use insert: true)`;
    expect(d!.warnings).toEqual([warning]);
    expect(r.stderr).toBe(`bridle: warning: ${warning}\n`);
  });

  it('a row with disabled: { env: X } disappears when X is set, and is there when it is not', async () => {
    homeConfig('patch:\n  - { insert: true, id: guard:ci-only, use: read-only-mode, disabled: { notEnv: CI } }\n  - { id: guard:repeat-call, use: repeat-call, disabled: { env: NO_REPEAT_GUARD } }\n');
    const plain = await dump();
    expect(row(plain.d, 'guard:repeat-call')).toMatchObject({ disabled: { env: 'NO_REPEAT_GUARD' }, from: 'home' });
    expect(row(plain.d, 'guard:ci-only')).toBeUndefined();
    const set = await dump([], { NO_REPEAT_GUARD: '1', CI: 'true' });
    expect(row(set.d, 'guard:repeat-call')).toBeUndefined();
    expect(row(set.d, 'guard:ci-only')).toMatchObject({ use: 'read-only-mode', from: 'home' });
  });

  it('two providers for one seam exit 2 with one line naming both rows', async () => {
    const overlay = file('two.yaml', 'patch:\n  - { insert: true, id: model2, use: model/scripted, config: { file: /x.json } }\n');
    const r = await runCli(['config', '--dump', '--patch', overlay], { env: env() });
    expect([r.code, r.stderr]).toEqual([2, `bridle: row model2 (patch ${overlay}): provides model, which row model (bundle base) provides too: one provider per service\n`]);
    // The same at a session command: nothing runs.
    const run = await runCli(['run', '--patch', overlay, '--model', script([{ text: 'x' }]), 'hi'], { env: env() });
    expect(run.code).toBe(2);
    expect(existsSync(join(home, 'sessions'))).toBe(false);
  });

  it('a bad row — an unknown use, a config its provider refuses — exits 2 naming the row, the layer and the problem', async () => {
    homeConfig('patch:\n  - { id: store, use: sqlite }\n');
    const unknown = await runCli(['config', '--dump'], { env: env() });
    expect([unknown.code, unknown.stderr]).toEqual([2, 'bridle: row store (home): unknown use "sqlite" (known for store: jsonl, memory, postgres)\n']);
    homeConfig('patch:\n  - { id: turn, use: limits, config: { maxSteps: -3 } }\n');
    const bad = await runCli(['config', '--dump'], { env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^bridle: row turn \(home\): bad config: maxSteps: /);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('an isolated group may hold its own provider of a seam; without isolate the same group collides', async () => {
    const isolated = file('group.yaml', 'patch:\n  - { insert: true, id: explore, use: group, isolate: true, rows: [{ id: explore:model, use: scripted, config: { file: /cheap.json } }] }\n');
    const ok = await dump(['--patch', isolated]);
    expect(ok.r.code, ok.r.stderr).toBe(0);
    expect(row(ok.d, 'explore')).toMatchObject({ use: 'group', isolate: true, rows: [{ id: 'explore:model', use: 'scripted', from: `patch ${isolated}` }] });
    const open = file('open.yaml', 'patch:\n  - { insert: true, id: explore, use: group, rows: [{ id: explore:model, use: scripted, config: { file: /cheap.json } }] }\n');
    const clash = await runCli(['config', '--dump', '--patch', open], { env: env() });
    expect([clash.code, clash.stderr]).toEqual([2, `bridle: row explore:model (patch ${open}): provides model, which row model (bundle base) provides too: one provider per service\n`]);
  });
});

describe('what the rows say is what a session runs', () => {
  it('fs with use: memory makes a scripted run’s write_file leave the disk untouched while a later read_file in the same session reads it back', async () => {
    const overlay = file('memory-fs.yaml', 'patch:\n  - { id: fs, use: memory }\n');
    const model = script([
      { toolCalls: [{ name: 'write_file', arguments: { path: 'notes/plan.txt', content: 'in memory only\n' } }] },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'notes/plan.txt' } }] },
      { text: 'done' },
    ]);
    const r = await runCli(['run', '--model', model, '--cwd', ws, '--approval', 'auto', '--sandbox', 'off', '--patch', overlay, 'write then read'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(ws)).toEqual([]);
    const [written, read] = results(onlyLog());
    expect(written).toMatchObject({ name: 'write_file', status: 'ok' });
    expect(read).toMatchObject({ name: 'read_file', status: 'ok' });
    expect(read!.content).toContain('in memory only');
  });

  it('a user plugin loaded from a module path registers a tool that a scripted bridle run calls', async () => {
    mkdirSync(join(home, 'plugins'));
    writeFileSync(
      join(home, 'plugins', 'lint.mjs'),
      [
        'export default {',
        "  name: 'lint',",
        "  inject: ['tools'],",
        '  apply(ctx, config) {',
        '    ctx.tools.register({',
        "      name: 'lint', description: 'Lint a file.', readOnly: true, idempotent: true,",
        "      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },",
        '      present: (a) => `lint ${a.path}`,',
        "      execute: async (a) => ({ status: 'ok', content: `${a.path}: no problems (${config.style ?? 'default'} style)` }),",
        '    });',
        '  },',
        '};',
      ].join('\n'),
    );
    // A path relative to the file that names it: $BRIDLE_HOME here.
    homeConfig("patch:\n  - { insert: true, id: 'tool:lint', use: ./plugins/lint.mjs, config: { style: strict } }\n");
    const model = script([{ toolCalls: [{ name: 'lint', arguments: { path: 'src/a.ts' } }, { name: 'lint', arguments: { path: 7 } }] }, { text: 'linted' }]);
    const r = await runCli(['run', '--model', model, '--cwd', ws, '--approval', 'auto', '--sandbox', 'off', 'lint it'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const log = onlyLog();
    const header = log.find((e): e is EntryOf<'request/header'> => e.kind === 'request/header')!;
    expect(header.tools.map((t) => t.name)).toContain('lint');
    expect(results(log).sort((a, b) => a.callId.localeCompare(b.callId)).map((x) => [x.status, x.code ?? '', x.content.split('\n')[0]])).toEqual([
      ['ok', '', 'src/a.ts: no problems (strict style)'],
      // Its JSON Schema is checked before dispatch like any tool's (I4).
      ['rejected', 'INVALID_ARGUMENTS', 'Rejected before dispatch (INVALID_ARGUMENTS): Invalid arguments for lint:'],
    ]);
    const dumped = await dump();
    expect(row(dumped.d, 'tool:lint')).toMatchObject({ use: join(home, 'plugins', 'lint.mjs'), config: { style: 'strict' }, from: 'home' });
  });
});
