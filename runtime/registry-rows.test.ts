/**
 * The registries are rows (course ch. 11, ADR 0066): `tools`, `hooks` and `prompt` are rows of the base
 * bundle like any other, not plugins mounted before every row, so a patch replaces one by id; a row that
 * replaces one with something that is not a registry is refused by name.
 */
import { describe, expect, it } from 'vitest';
import { base } from '../bundles/base.js';
import type { Plugin } from '../plugins/host.js';
import { CompositionError } from '../plugins/composition-error.js';
import { HOOKS, MODEL, TOOLS } from '../ports/index.js';
import { createScriptedProviderFromFunction } from '../adapters/model/scripted.js';
import type { SessionControl } from '../ports/session.js';
import { REGISTRIES } from './builtins.js';
import { buildHost } from './host.js';
import { sessionRows } from './session.js';

const session = { id: 's', depth: 0, cwd: '/w', bridleHome: '/h', inject: () => undefined, entries: () => [], record: () => undefined, child: () => { throw new Error('no children here'); } } as unknown as SessionControl;
const facts = { env: {}, tty: false };
const overrides = [{ key: MODEL, service: createScriptedProviderFromFunction(() => undefined) }];

describe('the registries as rows', () => {
  it('the base bundle has a row for each registry, and the session gets them from those rows', () => {
    expect(base.rows.slice(0, 3)).toEqual([{ id: 'tools', use: 'registry' }, { id: 'hooks', use: 'registry' }, { id: 'prompt', use: 'registry' }]);
    const built = buildHost(sessionRows({ settings: { sandbox: 'off' }, facts }), { session, overrides });
    const active = built.host.status().filter((s) => s.state === 'active').map((s) => s.id);
    expect(active).toEqual(expect.arrayContaining(['tools', 'hooks', 'prompt']));
    // Besides the session, only what rows build on: the registries and bridle's own loop (ADR 0077).
    expect(active.filter((id) => id.startsWith('core:') && !['core:session', 'core:registries', 'core:machines'].includes(id))).toEqual([]);
    expect(built.host.get(TOOLS)).toBe(built.tools);
    built.host.dispose();
  });

  it('a patch replaces the hooks row by id: its plugin provides the hooks every other row registers with', () => {
    let seen = 0;
    const mine: Plugin = { name: 'my-hooks', inject: [REGISTRIES], provides: [HOOKS], apply: (ctx) => void (seen++, ctx.provide(HOOKS, ctx.get(REGISTRIES).hooks)) };
    const rows = sessionRows({ settings: { sandbox: 'off' }, patch: [{ id: 'hooks', use: '/virtual/my-hooks.js' }], facts });
    expect(rows.find((r) => r.id === 'hooks')).toMatchObject({ from: 'options' });
    const built = buildHost(rows, { session, overrides, loaded: new Map([['/virtual/my-hooks.js', mine]]) });
    expect(seen).toBe(1);
    expect(built.host.status().find((s) => s.id === 'hooks')).toMatchObject({ state: 'active' });
    built.host.dispose();
  });

  it('a row that replaces the tools registry with something that is not one is refused, naming the row', () => {
    const fake: Plugin = { name: 'fake-tools', provides: [TOOLS], apply: (ctx) => void ctx.provide(TOOLS, { register: () => () => undefined, list: () => [] } as never) };
    const rows = sessionRows({ settings: { sandbox: 'off' }, patch: [{ id: 'tools', use: '/virtual/fake.js' }], facts });
    expect(() => buildHost(rows, { session, overrides, loaded: new Map([['/virtual/fake.js', fake]]) })).toThrow(CompositionError);
    expect(() => buildHost(rows, { session, overrides, loaded: new Map([['/virtual/fake.js', fake]]) })).toThrow(/row tools \(options\): provides a tools service that is not bridle's tools registry/);
  });
});
