/**
 * The agent loop is a row (course ch. 11, ADR 0077): the base bundle's `loop:agent` provides the machines;
 * a patch replaces it by id with a plugin that provides another loop, built on bridle's own (`machines`)
 * by refining a machine, and the session runs that one — no fork. A row that provides something that is
 * not a loop is refused by name.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { base } from '../bundles/base.js';
import type { Plugin } from '../plugins/host.js';
import { CompositionError } from '../plugins/composition-error.js';
import { SessionStart } from '../log/entries-session.js';
import type { EntryOf } from '../log/entries.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';
import { AGENT_LOOP, MACHINES, type AgentLoop } from './agent-loop.js';
import { LoopReplayError } from '../replay/errors.js';
import { replayThroughMachines } from '../replay/replay.js';
import { toolsOfLog } from '../replay/setup.js';
import { builtinTools } from '../tools/index.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

/** A model that never stops calling tools: only the loop's step policy ends its turn. */
const busy = () => ({ toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] });
const twoSteps: Plugin = {
  name: 'two-steps',
  inject: [MACHINES],
  provides: [AGENT_LOOP],
  apply: (ctx) => void ctx.provide(AGENT_LOOP, ctx.get(MACHINES).refine({ turn: (m) => m.provide({ guards: { isAtMaxSteps: ({ context }) => context.steps >= 2 } }) }, 'two-steps')),
};
const ends = (h: Harness) => h.entries().filter((e): e is EntryOf<'turn/end'> => e.kind === 'turn/end');
const steps = (h: Harness) => h.entries().filter((e) => e.kind === 'step/start').length;

describe('the agent loop as a row', () => {
  it('the base bundle has the loop:agent row, and a session on it runs bridle\'s own step policy (max-steps at the turn row\'s limit)', async () => {
    expect(base.rows.find((r) => r.id === 'loop:agent')).toEqual({ id: 'loop:agent', use: 'machines' });
    h = createHarness(busy, { maxSteps: 4 });
    await h.session.run('go');
    expect(ends(h)).toMatchObject([{ reason: 'max-steps' }]);
    expect(steps(h)).toBe(4);
  });

  it('a patch replacing loop:agent by id runs its loop: the same machines with another step policy', async () => {
    h = createHarness(busy, { maxSteps: 4, patch: [{ id: 'loop:agent', use: '/virtual/two-steps.js' }], loaded: new Map([['/virtual/two-steps.js', twoSteps]]) });
    expect(h.session.host.status().find((s) => s.id === 'loop:agent')).toMatchObject({ state: 'active' });
    await h.session.run('go');
    expect(ends(h)).toMatchObject([{ reason: 'max-steps' }]);
    expect(steps(h)).toBe(2);
  });

  it('refinements stack: a refined loop refined again applies both, in order, each time a session provides it', async () => {
    const seen: string[] = [];
    const stacked: Plugin = {
      name: 'stacked',
      inject: [MACHINES],
      provides: [AGENT_LOOP],
      apply(ctx) {
        const three = ctx.get(MACHINES).refine({ step: (m) => (seen.push('step'), m), turn: (m) => (seen.push('three'), m.provide({ guards: { isAtMaxSteps: ({ context }) => context.steps >= 3 } })) });
        ctx.provide(AGENT_LOOP, three.refine({ turn: (m) => (seen.push('one'), m.provide({ guards: { isAtMaxSteps: ({ context }) => context.steps >= 1 } })) }));
      },
    };
    h = createHarness(busy, { maxSteps: 4, patch: [{ id: 'loop:agent', use: '/virtual/stacked.js' }], loaded: new Map([['/virtual/stacked.js', stacked]]) });
    expect(seen).toEqual(['step', 'three', 'one']);
    await h.session.run('go');
    // The later refinement's guard wins (xstate's `provide` merges, the last one given is used).
    expect(steps(h)).toBe(1);
  });

  it('a row that provides something that is not a loop is a CompositionError naming the row', () => {
    const fake: Plugin = { name: 'fake-loop', provides: [AGENT_LOOP], apply: (ctx) => void ctx.provide(AGENT_LOOP, { name: 'nope' } as unknown as AgentLoop) };
    const open = () => createHarness(busy, { patch: [{ id: 'loop:agent', use: '/virtual/fake.js' }], loaded: new Map([['/virtual/fake.js', fake]]) });
    expect(open).toThrow(CompositionError);
    expect(open).toThrow(/row loop:agent \(options\): provides an agent-loop service that is not a loop/);
  });

  it('session/start names a replaced loop (ADR 0085): its row and module; bridle\'s own loop is not named', async () => {
    h = createHarness(busy, { maxSteps: 4 });
    await h.session.run('go');
    expect(Object.hasOwn(h.entries()[0]!, 'loop')).toBe(false);
    h.cleanup();
    // A module handed in already imported: no file was read, so no hash.
    h = createHarness(busy, { maxSteps: 4, patch: [{ id: 'loop:agent', use: '/virtual/two-steps.js' }], loaded: new Map([['/virtual/two-steps.js', twoSteps]]) });
    await h.session.run('go');
    expect(h.entries()[0]).toMatchObject({ kind: 'session/start', loop: { row: 'loop:agent', use: '/virtual/two-steps.js' } });
    expect((h.entries()[0] as EntryOf<'session/start'>).loop?.sha256).toBeUndefined();
  });

  it('the recorded loop is checked by the schema: a hash is 64 hex digits, nothing else is taken', async () => {
    h = createHarness(busy, { maxSteps: 4, patch: [{ id: 'loop:agent', use: '/virtual/two-steps.js' }], loaded: new Map([['/virtual/two-steps.js', twoSteps]]) });
    await h.session.run('go');
    const start = h.entries()[0]!;
    expect(SessionStart.safeParse({ ...start, loop: { row: 'loop:agent', use: '/m.js', sha256: 'f'.repeat(64) } }).success).toBe(true);
    expect(SessionStart.safeParse({ ...start, loop: { row: 'loop:agent', use: '/m.js', sha256: 'not-a-hash' } }).success).toBe(false);
    expect(SessionStart.safeParse({ ...start, loop: { row: 'loop:agent', use: '/m.js', name: 'extra' } }).success).toBe(false);
  });

  it('replay through the machines never re-drives a logged loop through bridle\'s own: refused by name, or run through the same one', async () => {
    h = createHarness(busy, { maxSteps: 4, patch: [{ id: 'loop:agent', use: '/virtual/two-steps.js' }], loaded: new Map([['/virtual/two-steps.js', twoSteps]]) });
    await h.session.run('go');
    await h.session.close();
    const log = h.entries();
    const tools = toolsOfLog(log, builtinTools());
    await expect(replayThroughMachines(log, tools)).rejects.toThrow(LoopReplayError);
    await expect(replayThroughMachines(log, tools)).rejects.toThrow(/^LOOP_UNAVAILABLE: the log ran the loop row loop:agent, \/virtual\/two-steps\.js \(no file hash\); the product runs bridle's own loop$/);
    // Without a hash nothing proves the offered module is the one that ran: refused even at the same path.
    const offered = { identity: { row: 'loop:agent', use: '/virtual/two-steps.js' }, plugin: twoSteps };
    await expect(replayThroughMachines(log, tools, { loop: offered })).rejects.toMatchObject({ code: 'LOOP_UNAVAILABLE' });
    // A log naming a hashed module replays through the offered one only when row, path and hash all match.
    const sha256 = 'a'.repeat(64);
    const hashed = [{ ...log[0]!, loop: { row: 'loop:agent', use: '/virtual/two-steps.js', sha256 } } as EntryOf<'session/start'>, ...log.slice(1)];
    await expect(replayThroughMachines(hashed, tools, { loop: { identity: { ...offered.identity, sha256: 'b'.repeat(64) }, plugin: twoSteps } })).rejects.toMatchObject({ code: 'LOOP_MISMATCH' });
    const same = await replayThroughMachines(hashed, tools, { loop: { identity: { ...offered.identity, sha256 }, plugin: twoSteps } });
    expect(same.identical).toBe(true);
  });
});
