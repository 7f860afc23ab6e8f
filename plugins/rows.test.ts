import { describe, expect, it } from 'vitest';
import { composeEntries, enabledRows, isDisabled, Patch, type Row } from './rows.js';
import { CompositionError } from './composition-error.js';

const base: Row[] = [
  { id: 'model', use: 'openai', config: { model: 'gpt-4o-mini' } },
  { id: 'fs', use: 'local' },
  { id: 'sandbox', use: 'bwrap', config: { mode: 'workspace-write' } },
  { id: 'explore', use: 'group', isolate: true, rows: [{ id: 'explore:model', use: 'openai', config: { model: 'small' } }] },
];
const bundle = { from: 'bundle base', rows: base };

describe('composeEntries (course ch. 11)', () => {
  it('a later layer’s matching id fully replaces the earlier row: no deep merge', () => {
    const { rows, warnings } = composeEntries(bundle, { from: 'home', patch: [{ id: 'sandbox', use: 'bwrap', config: { network: true } }] });
    expect(rows.find((r) => r.id === 'sandbox')).toEqual({ id: 'sandbox', use: 'bwrap', config: { network: true }, from: 'home' });
    expect(warnings).toEqual([]);
  });

  it('applies strictly in order: the last layer that replaces a row wins and is named as its source', () => {
    const { rows } = composeEntries(
      bundle,
      { from: 'profile ci', patch: [{ id: 'fs', use: 'memory' }] },
      { from: 'home', patch: [{ id: 'fs', use: 'local', config: { note: 'home' } }] },
      { from: 'patch ./overlay.yaml', patch: [] },
    );
    expect(rows.map((r) => [r.id, r.from])).toEqual([
      ['model', 'bundle base'],
      ['fs', 'home'],
      ['sandbox', 'bundle base'],
      ['explore', 'bundle base'],
    ]);
  });

  it('an unmatched-id patch only warns, never throws', () => {
    const run = () => composeEntries(bundle, { from: 'patch ./x.yaml', patch: [{ id: 'modle', use: 'scripted' }, { id: 'gone', remove: true }] });
    expect(run).not.toThrow();
    expect(run().warnings).toEqual([
      'patch ./x.yaml: replace of row modle, which no earlier layer has; ignored (to add it, use insert: true)',
      'patch ./x.yaml: remove of row gone, which no earlier layer has; nothing removed',
    ]);
    expect(run().rows.map((r) => r.id)).toEqual(['model', 'fs', 'sandbox', 'explore']);
  });

  it('insert adds a row (at the end, or after/before a named one, inside its group); an existing id is an error', () => {
    const { rows } = composeEntries(bundle, {
      from: 'home',
      patch: [
        { insert: true, id: 'tool:lint', use: './lint.js' },
        { insert: true, id: 'explore:tool', use: 'read_file', after: 'explore:model' },
        { insert: true, id: 'clock', use: 'fixed', before: 'model' },
      ],
    });
    expect(rows.map((r) => r.id)).toEqual(['clock', 'model', 'fs', 'sandbox', 'explore', 'tool:lint']);
    expect(rows.find((r) => r.id === 'explore')!.rows!.map((r) => [r.id, r.from])).toEqual([
      ['explore:model', 'bundle base'],
      ['explore:tool', 'home'],
    ]);
    expect(() => composeEntries(bundle, { from: 'home', patch: [{ insert: true, id: 'fs', use: 'memory' }] })).toThrow(
      new CompositionError('fs', 'home', 'insert of an id that already exists (to replace it, leave out insert: true)'),
    );
    expect(() => composeEntries(bundle, { from: 'home', patch: [{ insert: true, id: 'x', use: 'y', after: 'nope' }] })).toThrow('row x (home): insert after row nope, which does not exist');
  });

  it('replaces and removes rows inside a group by id', () => {
    const { rows } = composeEntries(bundle, { from: 'flag', patch: [{ id: 'explore:model', use: 'scripted', config: { file: 's.json' } }] });
    expect(rows.find((r) => r.id === 'explore')!.rows).toEqual([{ id: 'explore:model', use: 'scripted', config: { file: 's.json' }, from: 'flag' }]);
    const removed = composeEntries(bundle, { from: 'home', patch: [{ id: 'explore:model', remove: true }] });
    expect(removed.rows.find((r) => r.id === 'explore')!.rows).toEqual([]);
  });

  it('refuses a bundle that uses an id twice', () => {
    expect(() => composeEntries({ from: 'bundle base', rows: [...base, { id: 'explore:model', use: 'x' }] })).toThrow('row explore:model (bundle base): the id is used twice');
  });

  it('does not change its inputs', () => {
    const copy = JSON.parse(JSON.stringify(base));
    composeEntries(bundle, { from: 'home', patch: [{ id: 'fs', use: 'memory' }, { id: 'explore:model', remove: true }] });
    expect(base).toEqual(copy);
  });

  it('reads the written form of a patch: replace, insert, remove, disabled predicates', () => {
    const parsed = Patch.parse([
      { id: 'model', use: 'scripted', config: { file: 'a.json' } },
      { insert: true, id: 'tool:x', use: './x.js', disabled: { env: 'CI' } },
      { id: 'fs', remove: true },
    ]);
    expect(parsed).toHaveLength(3);
    expect(() => Patch.parse([{ id: 'fs', use: 'memory', disabled: { os: 'linux' } }])).toThrow();
    expect(() => Patch.parse([{ id: 'fs', use: 'memory', colour: 'red' }])).toThrow();
  });
});

describe('disabled: a host-conditional predicate (course ch. 11)', () => {
  const facts = (env: Record<string, string>, tty = false) => ({ env, tty });

  it('one shared patch file mounts different rows per environment with zero branching in the consumers', () => {
    const { rows } = composeEntries(bundle, {
      from: 'home',
      patch: [
        { insert: true, id: 'notify:desktop', use: 'desktop', disabled: { env: 'CI' } },
        { insert: true, id: 'notify:ci', use: 'annotations', disabled: { notEnv: 'CI' } },
        { insert: true, id: 'approval:terminal', use: 'terminal', disabled: { tty: false } },
      ],
    });
    const ids = (env: Record<string, string>, tty: boolean) => enabledRows(rows, facts(env, tty)).map((r) => r.id).filter((id) => id.includes(':'));
    expect(ids({}, true)).toEqual(['notify:desktop', 'approval:terminal']);
    expect(ids({ CI: 'true' }, false)).toEqual(['notify:ci']);
    // Set but empty counts as unset, as `CI= bridle …` means in a shell.
    expect(ids({ CI: '' }, false)).toEqual(['notify:desktop']);
  });

  it('leaves out disabled rows inside groups and whole disabled groups', () => {
    const rows = composeEntries({ from: 'bundle base', rows: [{ id: 'g', use: 'group', rows: [{ id: 'a', use: 'x', disabled: true }, { id: 'b', use: 'x' }] }, { id: 'h', use: 'group', disabled: { env: 'OFF' }, rows: [] }] }).rows;
    expect(enabledRows(rows, facts({ OFF: '1' })).map((r) => [r.id, r.rows?.map((x) => x.id)])).toEqual([['g', ['b']]]);
    expect(isDisabled({ disabled: false }, facts({}))).toBe(false);
  });
});
