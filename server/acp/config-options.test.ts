import { describe, expect, it } from 'vitest';
import { ConfigOptionError, configOptions, settleConfig, type AcpConfigChoices } from './config-options.js';
import { BadCursorError, sessionPage } from './session-list.js';

const choices: AcpConfigChoices = { approval: { current: 'ask', ceiling: 'ask' }, model: { current: 'gpt-4o', choices: ['gpt-4o', 'gpt-5'] } };
const reason = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return err instanceof ConfigOptionError ? err.reason : 'other';
  }
  return 'none';
};

describe('ACP config options (ADR 0063)', () => {
  it('offers approval up to the ceiling and the model choices, as the schema has them', () => {
    const [approval, model] = configOptions(choices);
    expect(approval).toMatchObject({ type: 'select', id: 'approval', category: 'mode', currentValue: 'ask' });
    expect((approval as { options: { value: string }[] }).options.map((o) => o.value)).toEqual(['never', 'ask']);
    expect(model).toMatchObject({ type: 'select', id: 'model', category: 'model', currentValue: 'gpt-4o' });
  });

  it('settles a narrowing and a model; refuses a widening POLICY_WIDENED, an unknown value or option by name; the current value changes nothing', () => {
    expect(settleConfig(choices, 'approval', 'never')).toEqual({ approval: 'never' });
    expect(settleConfig(choices, 'approval', 'ask')).toBeUndefined();
    expect(settleConfig(choices, 'model', 'gpt-5')).toEqual({ model: 'gpt-5' });
    expect(reason(() => settleConfig(choices, 'approval', 'auto'))).toBe('POLICY_WIDENED');
    expect(reason(() => settleConfig(choices, 'approval', 'sometimes'))).toBe('BAD_CONFIG_VALUE');
    expect(reason(() => settleConfig(choices, 'model', 'gpt-9'))).toBe('BAD_CONFIG_VALUE');
    expect(reason(() => settleConfig(choices, 'model', true))).toBe('BAD_CONFIG_VALUE');
    expect(reason(() => settleConfig(choices, 'sandbox', 'off'))).toBe('BAD_CONFIG_ID');
  });
});

describe('session/list pages (ADR 0063)', () => {
  const stored = Array.from({ length: 5 }, (_, i) => ({ id: `s${i}`, lastSeq: 1, cwd: i === 4 ? '/other' : '/w', model: 'm', updatedAt: `2026-01-0${i + 1}T00:00:00.000Z` }));
  it('newest first, filtered by cwd, in pages whose cursor is its own', () => {
    const first = sessionPage(stored, { cwd: '/w', page: 2 });
    expect(first.sessions.map((s) => s.sessionId)).toEqual(['s3', 's2']);
    expect(first.nextCursor).toBe('2');
    const second = sessionPage(stored, { cwd: '/w', page: 2, cursor: first.nextCursor! });
    expect(second).toEqual({ sessions: [expect.objectContaining({ sessionId: 's1' }), expect.objectContaining({ sessionId: 's0' })] });
    expect(sessionPage(stored, {}).sessions[0]).toEqual({ sessionId: 's4', cwd: '/other', updatedAt: '2026-01-05T00:00:00.000Z' });
    expect(() => sessionPage(stored, { cursor: 'nope' })).toThrow(BadCursorError);
  });
});
