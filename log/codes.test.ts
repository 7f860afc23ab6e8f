import { describe, expect, it } from 'vitest';
import { codes, SubagentCode, ToolResultCode, TurnEndCode } from './codes.js';
import { ForkRefusalCode } from './fork.js';

describe('codes(): a stable code set spelled once', () => {
  it('maps every code to its own name and cannot be changed', () => {
    const set = codes({ A_B: 'why A_B', C: 'why C' });
    expect(set).toEqual({ A_B: 'A_B', C: 'C' });
    expect(Object.isFrozen(set)).toBe(true);
  });

  it('the log\'s code sets are what readers match on', () => {
    for (const set of [ToolResultCode, TurnEndCode, SubagentCode, ForkRefusalCode]) for (const [k, v] of Object.entries(set)) expect(v).toBe(k);
    expect(Object.keys(TurnEndCode)).toEqual(['LOG_NOT_DURABLE', 'PRE_STEP_FAILED', 'BUDGET_EXHAUSTED', 'CONTEXT_WINDOW_EXCEEDED', 'REQUEST_BUILD_FAILED', 'SESSION_CRASHED']);
  });
});
