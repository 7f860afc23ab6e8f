/**
 * The exhibit's unit tests: every line of the buggy scheduler runs, and every
 * expectation holds. They never put a running read before a ready write, so
 * they cannot see the bug (`../ordering-exhibit.test.ts`).
 */
import { describe, expect, it } from 'vitest';
import { releasable } from './schedule-calls.ordering-bug.js';
import type { CallSlot } from '../../../machines/schedule-calls.js';

const read = (callId: string, phase: CallSlot['phase']): CallSlot => ({ callId, phase, readOnly: true });
const write = (callId: string, phase: CallSlot['phase']): CallSlot => ({ callId, phase, readOnly: false });

describe('the exhibit scheduler, by its own unit tests', () => {
  it('releases a run of ready reads together', () => {
    expect(releasable([read('c1', 'ready'), read('c2', 'ready')])).toEqual(['c1', 'c2']);
  });

  it('skips settled calls', () => {
    expect(releasable([read('c1', 'settled'), write('c2', 'ready')])).toEqual(['c2']);
  });

  it('stops at a pending call: calls start in the model’s order', () => {
    expect(releasable([read('c1', 'pending'), read('c2', 'ready')])).toEqual([]);
  });

  it('holds everything behind a running write', () => {
    expect(releasable([write('c1', 'running'), read('c2', 'ready')])).toEqual([]);
  });

  it('lets a ready read join reads already running', () => {
    expect(releasable([read('c1', 'running'), read('c2', 'ready')])).toEqual(['c2']);
  });

  it('holds a write back behind reads released with it, and everything after the write', () => {
    expect(releasable([read('c1', 'ready'), write('c2', 'ready'), read('c3', 'ready')])).toEqual(['c1']);
  });

  it('releases a write alone when nothing before it is unsettled', () => {
    expect(releasable([write('c1', 'ready'), read('c2', 'ready')])).toEqual(['c1']);
  });
});
