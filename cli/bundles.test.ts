/**
 * Profiles stack bundles (course ch. 11, ADR 0066): the built-in `base` and the user's own, each a patch
 * file in `$BRIDLE_HOME/bundles/<name>/` with the modules it mounts beside it. A later bundle replaces an
 * earlier one's row by id (no throw); the order they are listed in decides; one bundle naming an id twice
 * is a named error. Composed offline: no session runs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { composeEntries, bundleLayer } from '../plugins/rows.js';
import { DuplicateRowError } from '../plugins/composition-error.js';
import { base } from '../bundles/base.js';
import { composeProduct } from './settings.js';
import { tempDir } from '../test/helpers/temp.js';

let home: string;
beforeEach(() => {
  home = fs.realpathSync(tempDir('bridle-bundles-'));
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

const bundle = (name: string, yaml: string, files: Record<string, string> = {}) => {
  const dir = path.join(home, 'bundles', name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'bundle.yaml'), yaml);
  for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), text);
};
const config = (yaml: string) => fs.writeFileSync(path.join(home, 'config.yaml'), yaml);
const compose = (profile: string) => composeProduct({ profile }, { env: { BRIDLE_HOME: home } });
const row = (rows: { id: string }[], id: string) => rows.find((r) => r.id === id);

const LINT = `export default { name: 'lint', inject: ['tools'], apply(ctx) { ctx.tools.register({ name: 'lint', description: 'Lint.', readOnly: true, parameters: { type: 'object', properties: {} }, present: () => 'lint', execute: async () => ({ status: 'ok', content: 'clean' }) }); } };\n`;

describe('bundles and profiles (course ch. 11)', () => {
  it('a second bundle replacing a base row works: it wins, is named as the source, and adds its own rows and modules', async () => {
    bundle('ci', ['patch:', '  - { id: sandbox, use: off }', '  - { id: tool:lint, use: ./lint.js }', ''].join('\n'), { 'lint.js': LINT });
    config('profiles:\n  ci: { bundles: [base, ci] }\n');
    const p = await compose('ci');
    expect(row(p.rows, 'sandbox')).toMatchObject({ use: 'off', from: 'bundle ci' });
    expect(row(p.rows, 'model')).toMatchObject({ from: 'bundle base' });
    const lint = path.join(home, 'bundles', 'ci', 'lint.js');
    expect(p.rows.at(-1)).toMatchObject({ id: 'tool:lint', use: lint, from: 'bundle ci' });
    expect(p.loaded.get(lint)).toMatchObject({ name: 'lint' });
    expect(p.warnings).toEqual([]);
  });

  it('stacking order decides: the bundle listed last wins a row both name', async () => {
    bundle('fast', 'patch:\n  - { id: turn, use: limits, config: { maxSteps: 5 } }\n');
    bundle('slow', 'patch:\n  - { id: turn, use: limits, config: { maxSteps: 50 } }\n');
    config('profiles:\n  a: { bundles: [base, fast, slow] }\n  b: { bundles: [base, slow, fast] }\n');
    expect(row((await compose('a')).rows, 'turn')).toMatchObject({ config: { maxSteps: 50 }, from: 'bundle slow' });
    expect(row((await compose('b')).rows, 'turn')).toMatchObject({ config: { maxSteps: 5 }, from: 'bundle fast' });
  });

  it('one bundle naming an id twice is DuplicateRowError, named with the row and the bundle', async () => {
    const twice = [base.rows[0]!, { id: 'tool:lint', use: 'grep' }, { id: 'tool:lint', use: 'glob' }];
    expect(() => composeEntries({ from: 'bundles', rows: [] }, bundleLayer('mine', twice))).toThrow(DuplicateRowError);
    expect(() => composeEntries({ from: 'bundles', rows: [] }, bundleLayer('mine', twice))).toThrow('row tool:lint (bundle mine): the id is used twice');
    bundle('twice', 'patch:\n  - { id: sandbox, use: off }\n  - { id: sandbox, use: bwrap }\n');
    config('profiles:\n  t: { bundles: [base, twice] }\n');
    await expect(compose('t')).rejects.toThrow(/row sandbox \(bundle twice\): the id is used twice/);
  });

  it("a bundle's modules are the home's even when the workspace holds the home; a --patch module inside the workspace is refused (ADR 0077)", async () => {
    bundle('ci', 'patch:\n  - { id: tool:lint, use: ./lint.js }\n', { 'lint.js': LINT });
    config('profiles:\n  ci: { bundles: [base, ci] }\n');
    const p = await composeProduct({ profile: 'ci' }, { env: { BRIDLE_HOME: home }, workspace: home });
    expect(p.loaded.get(path.join(home, 'bundles', 'ci', 'lint.js'))).toMatchObject({ name: 'lint' });
    const ws = `${home}-ws`;
    fs.mkdirSync(ws);
    onTestFinished(() => fs.rmSync(ws, { recursive: true, force: true }));
    fs.writeFileSync(path.join(ws, 'lint.js'), LINT);
    const patch = path.join(home, 'patch.yaml');
    fs.writeFileSync(patch, `patch:\n  - { insert: true, id: tool:mine, use: ../${path.basename(ws)}/lint.js }\n`);
    await expect(composeProduct({ patch }, { env: { BRIDLE_HOME: home }, workspace: ws })).rejects.toThrow(/row tool:mine \(patch .*\): module .*-ws\/lint\.js is inside the workspace/);
  });

  it('a bundle that is neither built in nor in $BRIDLE_HOME/bundles is refused by name; so is a name that is a path', async () => {
    config('profiles:\n  x: { bundles: [base, nowhere] }\n  y: { bundles: [base, ../etc] }\n');
    await expect(compose('x')).rejects.toThrow(/profile x: bundles: no bundle named "nowhere" \(built in: base; yours go in .*bundles\/<name>\/bundle\.yaml\)/);
    await expect(compose('y')).rejects.toThrow(/no bundle named "\.\.\/etc"/);
  });
});
