import { describe, expect, it } from 'vitest';
import { leftChanged, processState, type ProcessState } from './process-state.js';

const state = (over: Partial<ProcessState> = {}): ProcessState => ({ env: { HOME: '/root' }, cwd: '/w', fakeTimers: false, writes: [1, 2], ...over });

describe('leftChanged (what a shared-project file left behind)', () => {
  it('is empty for the same state, and for a real process read twice', () => {
    expect(leftChanged(state(), state())).toEqual([]);
    expect(leftChanged(processState(), processState())).toEqual([]);
  });

  it('names each variable set, changed or deleted, without its value', () => {
    const after = state({ env: { HOME: '/tmp/h', OPENAI_API_KEY: 'sk-secret' } });
    expect(leftChanged(state(), after)).toEqual(['process.env.HOME changed', 'process.env.OPENAI_API_KEY set']);
    expect(leftChanged(state(), state({ env: {} }))).toEqual(['process.env.HOME deleted']);
  });

  it('names a changed cwd, fake timers left on and a patched stdout or stderr write', () => {
    expect(leftChanged(state(), state({ cwd: '/elsewhere', fakeTimers: true, writes: [1, 3] }))).toEqual([
      'cwd changed to /elsewhere',
      'fake timers left on',
      'process.stdout or process.stderr write left patched',
    ]);
  });
});
