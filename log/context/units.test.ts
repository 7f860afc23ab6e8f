import { describe, expect, it } from 'vitest';
import { deriveMessages, Projection } from '../derive-messages.js';
import { LogBuilder } from './testing.js';
import { unitsOf } from './units.js';

describe('units', () => {
  it('keep each call with its results, even when results were logged out of order; concatenated they are the projection', () => {
    const b = new LogBuilder();
    b.user('t1', 'go');
    b.step('t1', 1, { text: 'looking', calls: [{ name: 'a', result: 'A' }, { name: 'b', result: 'B' }], order: [1, 0] });
    b.step('t1', 2, { calls: [{ name: 'c', result: 'C' }] });
    b.step('t1', 3, { text: 'done' });
    const p = new Projection();
    b.entries.forEach((e) => p.apply(e));
    const units = unitsOf(p.visible);
    expect(units.map((u) => u.items.map((i) => i.kind))).toEqual([
      ['user/message'],
      ['assistant/message', 'tool/result', 'tool/result'],
      ['assistant/message', 'tool/result'],
      ['assistant/message'],
    ]);
    expect(units.flatMap((u) => u.messages)).toEqual(deriveMessages(b.entries));
    // Covers are disjoint and ordered.
    for (let i = 1; i < units.length; i++) expect(units[i]!.start).toBeGreaterThan(units[i - 1]!.end);
  });
});
