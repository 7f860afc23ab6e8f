import { describe, expect, it } from 'vitest';
import { interpolate, PromptVariableError } from './interpolate.js';

describe('strict interpolation', () => {
  it('fills known variables, with or without spaces inside the braces', () => {
    expect(interpolate('in {{cwd}} with {{ model }}', { cwd: '/w', model: 'm' })).toBe('in /w with m');
    expect(interpolate('no refs {single} {{ }}', {})).toBe('no refs {single} {{ }}');
  });

  it('throws a named error for an unknown variable, naming it, the section and what is known', () => {
    let err: unknown;
    try {
      interpolate('hello {{user}}', { cwd: '/w' }, 'greeting');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PromptVariableError);
    expect(err).toMatchObject({ name: 'PromptVariableError', variable: 'user', section: 'greeting' });
    expect((err as Error).message).toBe('prompt section "greeting" refers to {{user}}, which is not defined (known: cwd)');
  });

  it('does not treat inherited properties as variables', () => {
    expect(() => interpolate('{{toString}}', {})).toThrow(PromptVariableError);
  });
});
