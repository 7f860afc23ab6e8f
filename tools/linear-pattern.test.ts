import { describe, expect, it } from 'vitest';
import { checkableSchema, isLinearPattern } from './linear-pattern.js';

describe('which schema patterns bridle checks itself (issue 20, item 8)', () => {
  it('keeps a start-anchored pattern with one varying quantifier and no alternation, back-reference or lookaround', () => {
    for (const p of ['^[a-z]+\\.txt$', '^\\d{3}-\\d{4}$', '^[A-Za-z0-9_-]{1,64}$', '^(?:v)\\d+$', '^(?<major>\\d)\\.x$', '^\\(?x$', '^[+*?|(]+$', '^x*?$'])
      expect(isLinearPattern(p), p).toBe(true);
  });

  it('drops nested or repeated quantifiers, alternation, back-references, lookaround, an unanchored start, and what `u` refuses', () => {
    for (const p of ['^(a+)+$', '^(a|a)*$', '^a*a*b$', '^\\d+-\\d+$', '^(a)\\1$', '^(?=a)a+$', '^(?<!b)a+$', 'a+b', '[a-z]+', '^a{1001}$', '^\\(?a*$', '^(?:x?)?$', '^a{2,}b?$', '^\\k<n>$', '^[$'])
      expect(isLinearPattern(p), p).toBe(false);
  });

  it('leaves out only what it cannot vouch for, in keyword positions only, and loosens a patternProperties it cannot check', () => {
    const schema = {
      type: 'object',
      properties: {
        ok: { type: 'string', pattern: '^[a-z]+$' },
        evil: { type: 'string', pattern: '^(a+)+$' },
        pattern: { type: 'string' },
        list: { type: 'array', items: { type: 'string', pattern: '(x+x+)+y' } },
        either: { anyOf: [{ type: 'string', pattern: '^(a|aa)+$' }, { type: 'integer' }] },
        kept: { type: 'object', default: { pattern: '^(a+)+$' }, const: { pattern: '(b+)+' } },
        map: { type: 'object', patternProperties: { '^(a+)+$': { type: 'string' } }, additionalProperties: false },
      },
      $defs: { d: { type: 'string', pattern: '^(a*)*$' } },
    };
    const out = checkableSchema(schema) as typeof schema;
    expect(out.properties.ok.pattern).toBe('^[a-z]+$');
    expect(out.properties.evil).toEqual({ type: 'string' });
    expect(out.properties.pattern).toEqual({ type: 'string' });
    expect(out.properties.list.items).toEqual({ type: 'string' });
    expect(out.properties.either.anyOf[0]).toEqual({ type: 'string' });
    expect(out.properties.kept).toEqual(schema.properties.kept);
    expect(out.properties.map).toEqual({ type: 'object' });
    expect(out.$defs.d).toEqual({ type: 'string' });
    // The schema it was given is left as it was (its wire form keeps every pattern).
    expect(schema.properties.evil.pattern).toBe('^(a+)+$');
  });
});
