import { describe, expect, it } from 'vitest';
import { createActor, createMachine, type InspectionEvent } from 'xstate';
import { parseKillAt, stateEntries } from './soak-kill.js';

describe('BRIDLE_SOAK_KILL_AT: the soak kills the process at the entry of a machine state', () => {
  it('the hook sees the entry of a state the machine only passes through (an eventless transition), and the initial state', () => {
    const m = createMachine({ id: 'x', initial: 'a', states: { a: { on: { go: 'pass' } }, pass: { always: 'c' }, c: {} } });
    const seen: string[] = [];
    const inspect = stateEntries((machine, state) => seen.push(`${machine}.${state}`));
    const actor = createActor(m, { inspect: (e: InspectionEvent) => inspect(e) }).start();
    actor.send({ type: 'go' });
    expect(seen).toEqual(['x.a', 'x.pass', 'x.c']);
  });

  it('names a machine, a state path and the nth entry; anything else is a usage error naming the variable', () => {
    expect(parseKillAt('tool-call.executing')).toEqual({ machine: 'tool-call', state: 'executing', nth: 1 });
    expect(parseKillAt('session.running.active#3')).toEqual({ machine: 'session', state: 'running.active', nth: 3 });
    for (const bad of ['executing', 'tool-call.', 'tool-call.executing#0', 'a.b#x']) expect(() => parseKillAt(bad), bad).toThrow(/BRIDLE_SOAK_KILL_AT/);
  });
});
