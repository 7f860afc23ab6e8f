import { describe, expect, it } from 'vitest';
import { createMachine } from 'xstate';
import { toDirectedGraph } from 'xstate/graph';
import { activePaths, initialPaths, statePaths } from './state-paths.js';
import { stepMachine } from './step.machine.js';
import { subagentMachine } from './subagent.machine.js';
import { toolCallMachine } from './tool-call.machine.js';
import { turnMachine } from './turn.machine.js';

/** The states as xstate's own graph utility sees them: an independent walk of the same definition. */
const graphStates = (m: Parameters<typeof toDirectedGraph>[0]) => {
  const out: string[] = [];
  const walk = (n: ReturnType<typeof toDirectedGraph>, prefix: string) => {
    for (const c of n.children) {
      const path = prefix ? `${prefix}.${c.stateNode.key}` : c.stateNode.key;
      out.push(path);
      walk(c, path);
    }
  };
  walk(toDirectedGraph(m), '');
  return out;
};

describe('the soak kills at every state a machine defines', () => {
  it('every state of the tool-call, step, turn and subagent machines is enumerated, as toDirectedGraph sees them', () => {
    for (const m of [toolCallMachine, stepMachine, turnMachine, subagentMachine]) expect(statePaths(m), m.id).toEqual(graphStates(m));
    expect(statePaths(toolCallMachine)).toContain('flushingDispatch');
    expect(statePaths(subagentMachine)).toContain('cancelling');
  });

  it('a state added to a machine, nested ones too, is enumerated with no list to update', () => {
    const m = createMachine({ id: 'x', initial: 'a', states: { a: { on: { go: 'b' } }, b: { initial: 'b1', states: { b1: {}, b2: {} } } } });
    expect(statePaths(m)).toEqual(['a', 'b', 'b.b1', 'b.b2']);
    expect(initialPaths(m)).toEqual(['a']);
    expect(activePaths({ b: 'b2' })).toEqual(['b', 'b.b2']);
  });
});
