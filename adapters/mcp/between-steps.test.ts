import { describe, expect, it } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { betweenSteps } from './between-steps.js';

const e = (kind: string) => ({ kind }) as Entry;

describe('a changed MCP tool list takes effect between steps, never mid-step', () => {
  it('a change during a step waits for its step/end; two changes in one step apply once; one between steps applies at once', () => {
    const applied: string[] = [];
    const gate = betweenSteps(() => applied.push('apply'));
    gate.entry(e('turn/start'));
    gate.changed();
    expect(applied).toEqual(['apply']);
    gate.entry(e('step/start'));
    gate.changed();
    gate.entry(e('tool/result'));
    gate.changed();
    expect(applied).toEqual(['apply']);
    gate.entry(e('step/end'));
    expect(applied).toEqual(['apply', 'apply']);
    gate.entry(e('step/start'));
    gate.entry(e('step/end'));
    expect(applied).toHaveLength(2);
  });

  it('a step cut short (no step/end, its turn ended) lets the change through at turn/end', () => {
    const applied: number[] = [];
    const gate = betweenSteps(() => applied.push(1));
    gate.entry(e('step/start'));
    gate.changed();
    gate.entry(e('turn/end'));
    expect(applied).toEqual([1]);
  });
});
