import { setup } from 'xstate';
import { describe, expect, it } from 'vitest';
import { toolCallMachine } from '../../machines/tool-call.machine.js';
import { statesOf, transitionKey, transitionsOf } from './machine-graph.js';
import { generatePaths } from './generate.js';
import { runPath } from './run-path.js';
import type { PathModel } from './path-model.js';

describe('what a machine definition contains', () => {
  it('lists every nested state and every candidate: guarded branches, always, invoke done/error, targetless', () => {
    expect(statesOf(toolCallMachine)).toHaveLength(15);
    const labels = transitionsOf(toolCallMachine).map((t) => t.label);
    expect(labels).toContain('tool-call.rejected -[always]-> tool-call.flushingResult');
    expect(labels).toContain('tool-call.validating -[always if isValid]-> tool-call.checking');
    expect(labels).toContain('tool-call.validating -[always]-> tool-call.rejected');
    expect(labels).toContain('tool-call.settling -[always if isLogDurable]-> tool-call.done');
    expect(labels).toContain('tool-call.flushingResult -[xstate.error.actor.0.tool-call.flushingResult]-> tool-call.done');
    const m = setup({}).createMachine({ initial: 'a', on: { poke: { actions: [] } }, states: { a: { on: { go: 'b' } }, b: {} } });
    expect(transitionsOf(m).map((t) => t.label)).toEqual(['(machine) -[poke]-> (machine) (no target)', '(machine).a -[go]-> (machine).b']);
  });

  it('keys a candidate the same way on a provided copy of the machine', () => {
    const provided = toolCallMachine.provide({});
    const t = provided.root.states.ready!.transitions.get('tool.call.released')![0]!;
    expect(transitionKey(t)).toBe(transitionsOf(toolCallMachine).find((x) => x.key === 'tool-call.ready|tool.call.released|0')?.key);
  });

  it('coverage is measured, not assumed: one path leaves states and transitions uncovered', () => {
    const model: PathModel = { generator: 'shortest', check: () => [] };
    const m = setup({}).createMachine({ initial: 'a', states: { a: { on: { go: 'b', skip: 'c' } }, b: { on: { go: 'c' } }, c: { type: 'final' } } });
    const paths = generatePaths(m, model);
    const one = runPath(m, model, paths.find((p) => p.steps.length === 2 && p.steps[1]!.event.type === 'go')!);
    expect([...one.coverage.states].sort()).toEqual(['(machine).a', '(machine).b']);
    expect([...one.coverage.transitions]).toEqual(['(machine).a|go|0']);
  });
});
