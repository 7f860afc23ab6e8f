import { describe, expect, it } from 'vitest';
import { PromptVariableError } from './interpolate.js';
import { PromptRegistry } from './registry.js';

describe('the prompt registry', () => {
  it('assembles sections by order, then registration; scoped ones only where they apply', () => {
    const r = new PromptRegistry();
    r.add({ id: 'late', order: 50, template: 'late' });
    r.add({ id: 'first', order: 0, template: 'first in {{cwd}}' });
    r.add({ id: 'tie', order: 50, template: 'tie' });
    r.add({ id: 'kids', order: 10, scopes: ['subagent'], template: 'only for subagents' });
    r.add({ id: 'empty', order: 20, render: () => '  ' });
    expect(r.assemble('session', { cwd: '/w' })).toBe('first in /w\n\nlate\n\ntie');
    expect(r.assemble('subagent', { cwd: '/w' })).toBe('first in /w\n\nonly for subagents\n\nlate\n\ntie');
    expect(r.ids('session')).toEqual(['first', 'empty', 'late', 'tie']);
  });

  it('never interpolates rendered text (file contents may hold braces), and throws for a template that refers to an unknown variable', () => {
    const r = new PromptRegistry();
    r.add({ id: 'file', order: 0, render: () => 'use {{handlebars}} here' });
    expect(r.assemble('session', {})).toBe('use {{handlebars}} here');
    r.add({ id: 'bad', order: 1, template: '{{nope}}' });
    expect(() => r.assemble('session', {})).toThrow(PromptVariableError);
  });

  it('disposers remove once, bump the version, and ids are unique', () => {
    const r = new PromptRegistry();
    const v0 = r.version;
    const off = r.add({ id: 'a', order: 0, template: 'A' });
    expect(r.version).toBe(v0 + 1);
    expect(() => r.add({ id: 'a', order: 1, template: 'again' })).toThrow(/already registered/);
    off();
    off();
    expect(r.version).toBe(v0 + 2);
    expect(r.assemble('session', {})).toBe('');
    expect(() => r.add({ id: 'x', order: 0 })).toThrow(/neither a template nor a render/);
  });
});
