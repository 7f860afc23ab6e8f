import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const dir = new URL('../../docs/adr/', import.meta.url);
const records = readdirSync(dir).filter((f) => /^\d{4}-.*\.md$/.test(f)).sort();
const index = readFileSync(new URL('README.md', dir), 'utf8');
const numberOf = (f: string) => f.slice(0, 4);

describe('ADRs are never rewritten: a superseded record keeps its place and points forward', () => {
  it('the index states the rule and lists every record, by number and file', () => {
    expect(index).toMatch(/Records are never rewritten/);
    for (const f of records) expect(index, `docs/adr/README.md does not list ${f}`).toContain(`[${numberOf(f)}](${f})`);
  });

  it('every number is used once', () => {
    const numbers = records.map(numberOf);
    expect(numbers.filter((n, i) => numbers.indexOf(n) !== i)).toEqual([]);
  });

  it('every record has a status line, and every record a status line names exists', () => {
    const known = new Set(records.map(numberOf));
    for (const f of records) {
      const status = readFileSync(new URL(f, dir), 'utf8').split('\n').find((l) => l.startsWith('Status:'));
      expect(status, `${f} has no Status: line`).toBeDefined();
      for (const [, n] of status!.matchAll(/ADRs? (\d{4})/g)) expect(known.has(n!), `${f}'s status names ADR ${n}, which does not exist`).toBe(true);
    }
  });
});
