import { describe, expect, it } from 'vitest';
import { releasable, type CallSlot } from './schedule-calls.js';

const read = (callId: string, phase: CallSlot['phase']): CallSlot => ({ callId, phase, readOnly: true });
const write = (callId: string, phase: CallSlot['phase']): CallSlot => ({ callId, phase, readOnly: false });

describe('releasable', () => {
  it('releases a run of ready reads together, in order, and stops at a pending call', () => {
    expect(releasable([read('c1', 'ready'), read('c2', 'ready'), read('c3', 'pending'), read('c4', 'ready')])).toEqual(['c1', 'c2']);
  });

  it('holds a write back while an earlier read still runs (the case chapter 12’s exhibit gets wrong)', () => {
    expect(releasable([read('c1', 'running'), write('c2', 'ready')])).toEqual([]);
    expect(releasable([read('c1', 'settled'), write('c2', 'ready')])).toEqual(['c2']);
  });

  it('holds everything behind a running write, and releases a write alone', () => {
    expect(releasable([write('c1', 'running'), read('c2', 'ready')])).toEqual([]);
    expect(releasable([write('c1', 'ready'), read('c2', 'ready')])).toEqual(['c1']);
    expect(releasable([read('c1', 'ready'), write('c2', 'ready'), read('c3', 'ready')])).toEqual(['c1']);
  });
});
