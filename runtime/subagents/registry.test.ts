import { describe, expect, it } from 'vitest';
import type { SubagentProvider } from '../../ports/subagents.js';
import { createTreeBudget, parseTreeBudget } from './budget.js';
import { createRegistry } from './registry.js';
import { restrict, visibleUnder } from './restrict.js';

const provider = (name: string, advertised: SubagentProvider['advertised'] = {}): SubagentProvider => ({ name, advertised, open: () => Promise.reject(new Error('not here')) });

describe('the subagents registry', () => {
  it('selects a provider by name and refuses, by code, what it cannot admit', () => {
    const r = createRegistry({ maxDepth: 2 });
    r.register(provider('spawn'), 'subagent:spawn');
    r.register(provider('remote', { maxDepth: 1, tools: ['read_file'] }), 'subagent:remote');
    expect(r.names()).toEqual(['spawn', 'remote']);
    expect(r.admit({ provider: 'spawn', depth: 2 }, ['bash'])).toMatchObject({ ok: true, provider: { name: 'spawn' } });
    expect(r.admit({ provider: 'spawn', depth: 3 }, [])).toMatchObject({ ok: false, code: 'DEPTH_LIMIT' });
    expect(r.admit({ provider: 'remote', depth: 2 }, [])).toMatchObject({ ok: false, code: 'DEPTH_LIMIT' });
    expect(r.admit({ provider: 'remote', depth: 1, tools: ['bash'] }, ['bash'])).toMatchObject({ ok: false, code: 'TOOL_FILTER_UNSUPPORTED' });
    expect(r.admit({ provider: 'spawn', depth: 1, tools: ['bash', 'nope'] }, ['bash'])).toMatchObject({ ok: false, code: 'TOOL_FILTER_UNSUPPORTED', message: expect.stringContaining('cannot offer nope') });
    expect(r.admit({ provider: 'other', depth: 1 }, [])).toMatchObject({ ok: false, code: 'SUBAGENT_PROVIDER_UNKNOWN' });
    expect(() => r.register(provider('spawn'), 'plugin x')).toThrow(/registered twice: by subagent:spawn and by plugin x/);
  });

  it('admits nothing once the tree budget is spent, and tells its listeners once', () => {
    const budget = createTreeBudget({ steps: 2 });
    const heard: string[] = [];
    budget.onExhausted((why) => heard.push(why));
    const r = createRegistry({ maxDepth: 1, budget });
    r.register(provider('spawn'), 'x');
    const step = { seq: 1, at: '', kind: 'step/start', turn: 't1', step: 't1.s1' } as const;
    expect(budget.draw(step)).toBeUndefined();
    expect(r.admit({ provider: 'spawn', depth: 1 }, [])).toMatchObject({ ok: true });
    expect(budget.draw(step)).toBe('steps 2/2 used');
    budget.draw(step);
    expect(heard).toEqual(['steps 2/2 used']);
    expect(r.admit({ provider: 'spawn', depth: 1 }, [])).toMatchObject({ ok: false, code: 'TREE_BUDGET_EXHAUSTED' });
  });

  it('parses --tree-budget', () => {
    expect(parseTreeBudget('steps=50,tokens=200000')).toEqual({ steps: 50, tokens: 200000 });
    expect(parseTreeBudget('tokens=9')).toEqual({ tokens: 9 });
    expect(() => parseTreeBudget('steps=0')).toThrow(/--tree-budget wants steps=N,tokens=M/);
    expect(() => parseTreeBudget('50')).toThrow(/--tree-budget/);
  });

  it('drain waits for every teardown it tracks, also ones added while it waits', async () => {
    const r = createRegistry({ maxDepth: 1 });
    const done: string[] = [];
    r.track(new Promise<void>((res) => setTimeout(() => (done.push('a'), r.track(new Promise<void>((res2) => setTimeout(() => (done.push('b'), res2()), 5))), res()), 5)));
    r.track(Promise.reject(new Error('a teardown that failed')));
    await r.drain();
    expect(done).toEqual(['a', 'b']);
  });
});

describe('restrict()', () => {
  it('narrows by intersection and never hides a scoped tool', () => {
    expect(restrict(['read_file', 'bash', 'grep'], ['grep', 'read_file', 'nope'])).toEqual(['read_file', 'grep']);
    expect(restrict(['read_file', 'bash', 'handoff'], ['read_file'], new Set(['handoff']))).toEqual(['read_file', 'handoff']);
    expect(restrict(['a', 'b'], undefined)).toEqual(['a', 'b']);
    expect(visibleUnder(undefined)).toBeUndefined();
    expect(visibleUnder(['a'], new Set(['h']))!('h')).toBe(true);
  });
});
