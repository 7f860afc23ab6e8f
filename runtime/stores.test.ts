/** Where a session command's session lives: `--store` as a setting over the `store` row, and a session named whole by its Postgres location, a path or an id. */
import { describe, expect, it } from 'vitest';
import { composeEntries } from '../plugins/rows.js';
import { applySettings } from './settings.js';
import { base } from '../bundles/base.js';
import { flagSettings } from '../cli/settings.js';
import { parseStoredLines } from './logs/read.js';
import { sessionOfRef } from './stores.js';

const rows = composeEntries({ from: 'bundle base', rows: base.rows }).rows;
const withFlags = (f: Parameters<typeof flagSettings>[0]) => applySettings(rows, [{ from: 'flag', settings: flagSettings(f) }]).rows;
const storeRow = (r: ReturnType<typeof withFlags>) => r.find((x) => x.id === 'store');

describe('--store and --lease-ms', () => {
  it('a postgres:// URL makes the store row the Postgres store, with the lease length', () => {
    expect(storeRow(withFlags({ store: 'postgres://u@h/db', leaseMs: '4000' }))).toEqual({ id: 'store', use: 'postgres', config: { url: 'postgres://u@h/db', leaseMs: 4000 }, from: 'flag' });
  });

  it('anything else is a JSONL directory, made absolute against where bridle runs; --lease-ms alone changes nothing', () => {
    expect(storeRow(withFlags({ store: 'logs' }))).toEqual({ id: 'store', use: 'jsonl', config: { dir: `${process.cwd()}/logs` }, from: 'flag' });
    expect(storeRow(withFlags({ leaseMs: '4000' }))).toEqual({ id: 'store', use: 'jsonl', from: 'bundle base' });
  });

  it('refuses a lease too short to renew, in the flag\'s words', () => {
    expect(() => flagSettings({ leaseMs: '10' })).toThrow('--lease-ms must be a whole number of milliseconds from 100 to 3600000 (got "10")');
  });
});

describe('sessionOfRef', () => {
  const where = (r: ReturnType<typeof sessionOfRef>) => [r.store.id, r.store.locate(r.id)];
  it('an id is a file in the JSONL directory, or a session of the Postgres store the row names', () => {
    expect(where(sessionOfRef(rows, '/h', 'abc'))).toEqual(['jsonl', '/h/sessions/abc.jsonl']);
    expect(where(sessionOfRef(withFlags({ store: '/logs' }), '/h', 'abc'))).toEqual(['jsonl', '/logs/abc.jsonl']);
    const pg = sessionOfRef(withFlags({ store: 'postgres://u@h/db' }), '/h', 'abc');
    expect([pg.store.id, pg.id, (pg.store as { url?: string }).url]).toEqual(['postgres', 'abc', 'postgres://u@h/db']);
  });

  it('postgres://host/db#id, the location the CLI prints, names one whole, whatever the row', () => {
    const t = sessionOfRef(rows, '/h', 'postgresql://u@h/db?host=%2Frun#20261201-x');
    expect([t.store.id, t.id, (t.store as { url?: string }).url]).toEqual(['postgres', '20261201-x', 'postgresql://u@h/db?host=%2Frun']);
  });

  it('a log named by its path is that file, in the JSONL store of its directory', () => {
    expect(where(sessionOfRef(rows, '/h', '/a/b/s-1.jsonl'))).toEqual(['jsonl', '/a/b/s-1.jsonl']);
    expect(where(sessionOfRef(rows, '/h', '/a/b/s-1'))).toEqual(['jsonl', '/a/b/s-1.jsonl']);
  });

  it('a log at the root keeps its whole name (`replay /nonexistent` names /nonexistent.jsonl, not /onexistent.jsonl)', () => {
    expect(where(sessionOfRef(rows, '/h', '/nonexistent'))).toEqual(['jsonl', '/nonexistent.jsonl']);
    expect(where(sessionOfRef(rows, '/h', '/s-1.jsonl'))).toEqual(['jsonl', '/s-1.jsonl']);
  });
});

describe('parseStoredLines', () => {
  it('names the line a stored session goes wrong at', () => {
    const r = parseStoredLines(['{"seq":1}', 'not json']);
    expect(r.ok).toBe(false);
    expect(!r.ok && [r.violations[0]!.violation, r.violations[0]!.line]).toEqual(['unknown-kind', 1]);
  });
});
