import { describe, expect, it } from 'vitest';
import type { SessionPolicy } from '../log/entries-session.js';
import { comparePolicy, describeChanges, describePolicy } from './policy-order.js';

const p = (o: Partial<SessionPolicy> = {}): SessionPolicy => ({ approval: 'ask', sandbox: 'bwrap', mode: 'workspace-write', network: false, allow: [], ...o });

describe('the widening order of a session policy (ADR 0027)', () => {
  it('approval: never < ask < auto', () => {
    expect(comparePolicy(p({ approval: 'never' }), p({ approval: 'auto' })).widened).toEqual([{ key: 'approval', from: 'never', to: 'auto' }]);
    expect(comparePolicy(p({ approval: 'never' }), p({ approval: 'ask' })).widened).toHaveLength(1);
    expect(comparePolicy(p({ approval: 'auto' }), p({ approval: 'never' }))).toEqual({ widened: [], narrowed: [{ key: 'approval', from: 'auto', to: 'never' }] });
  });

  it('mode: read-only < workspace-write < full; network: off < on', () => {
    expect(comparePolicy(p({ mode: 'read-only' }), p({ mode: 'full' })).widened.map((c) => c.key)).toEqual(['mode']);
    expect(comparePolicy(p({ mode: 'full' }), p({ mode: 'read-only' })).narrowed.map((c) => c.key)).toEqual(['mode']);
    expect(comparePolicy(p(), p({ network: true })).widened).toEqual([{ key: 'network', from: 'false', to: 'true' }]);
    expect(comparePolicy(p({ network: true }), p()).narrowed.map((c) => c.key)).toEqual(['network']);
  });

  it('a sandbox that confines nothing is the widest; two confining providers in no known order count as wider', () => {
    const off = p({ sandbox: 'off', mode: 'full', network: true });
    expect(comparePolicy(p(), off).widened.map((c) => c.key)).toEqual(['sandbox', 'mode', 'network']);
    expect(comparePolicy(off, p()).narrowed.map((c) => c.key)).toEqual(['sandbox', 'mode', 'network']);
    expect(comparePolicy(p(), p({ sandbox: 'other' })).widened.map((c) => c.key)).toEqual(['sandbox']);
  });

  it('allow: a rule added widens, a rule dropped narrows', () => {
    const ls = { tool: 'bash', pattern: '^ls$' };
    const any = { tool: 'bash', pattern: '.*' };
    expect(describeChanges(comparePolicy(p({ allow: [ls] }), p({ allow: [ls, any] })).widened)).toBe('allow + bash:.*');
    expect(describeChanges(comparePolicy(p({ allow: [ls] }), p()).narrowed)).toBe('allow − bash:^ls$');
    const swap = comparePolicy(p({ allow: [ls] }), p({ allow: [any] }));
    expect([swap.widened.length, swap.narrowed.length]).toEqual([1, 1]);
    expect(comparePolicy(p({ allow: [ls, any] }), p({ allow: [any, ls] }))).toEqual({ widened: [], narrowed: [] });
  });

  it('the same policy changes nothing; a mixed change is both', () => {
    expect(comparePolicy(p(), p())).toEqual({ widened: [], narrowed: [] });
    const mixed = comparePolicy(p({ approval: 'auto' }), p({ approval: 'never', network: true }));
    expect(describeChanges(mixed.widened)).toBe('network false → true');
    expect(describeChanges(mixed.narrowed)).toBe('approval auto → never');
  });

  it('reads as a person would say it', () => {
    expect(describePolicy(p({ approval: 'never' }))).toBe('approval never, sandbox bwrap workspace-write, no network');
    expect(describePolicy(p({ sandbox: 'off', mode: 'full', network: true }))).toBe('approval ask, sandbox off, network');
  });
});
