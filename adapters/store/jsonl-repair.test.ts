import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { LogBuilder, logText } from '../../test/helpers/log-builder.js';
import { repairJsonlLog } from './jsonl-repair.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bridle-repair-'));
  file = path.join(dir, 's.jsonl');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const clock = () => Date.UTC(2026, 5, 1);
const read = () => fs.readFileSync(file, 'utf8');

describe('repairJsonlLog', () => {
  it('leaves a clean log byte for byte as it was', async () => {
    const text = logText(new LogBuilder().cleanTurn().entries);
    fs.writeFileSync(file, text);
    const r = await repairJsonlLog(file, clock);
    expect(r).toMatchObject({ ok: true, appended: [] });
    expect(read()).toBe(text);
  });

  it('cuts a torn last line back to the last newline, keeps every good line, and reports it', async () => {
    const entries = new LogBuilder().cleanTurn().entries;
    const good = logText(entries);
    const n = entries.length + 1;
    fs.writeFileSync(file, `${good}{"seq":${n},"at":"2026-01-01T00:00:00.0`);
    const r = await repairJsonlLog(file, clock);
    if (!r.ok) throw new Error('refused');
    expect(r.report.torn).toMatchObject({ line: n });
    const after = read();
    expect(after.startsWith(good)).toBe(true);
    const parsed = parseLog(after);
    expect(parsed.torn).toBeUndefined();
    expect(parsed.entries.at(-1)).toMatchObject({ seq: n, kind: 'repair', found: 'torn-tail' });
    expect(verifyLog(parsed.entries).violations).toEqual([]);
  });

  it('closes an open turn after a torn line, appending only', async () => {
    const b = new LogBuilder().cleanTurn().startTurn().startStep().answer('', [{ name: 'bash' }]).dispatch(1);
    const good = logText(b.entries);
    fs.writeFileSync(file, `${good}{"seq":${b.recorder.lastSeq + 1},"kind":"tool/res`);
    const r = await repairJsonlLog(file, clock);
    if (!r.ok) throw new Error('refused');
    const after = read();
    expect(after.startsWith(good)).toBe(true);
    const entries = parseLog(after).entries;
    expect(entries.slice(b.recorder.lastSeq).map((e) => e.kind)).toEqual(['repair', 'repair', 'tool/result', 'step/end', 'turn/end']);
    expect(verifyLog(entries).violations).toEqual([]);
    // A second repair finds nothing to do.
    expect(await repairJsonlLog(file, clock)).toMatchObject({ ok: true, appended: [] });
    expect(read()).toBe(after);
  });

  it('a whole last line that only lacks its newline is kept and ended', async () => {
    const text = logText(new LogBuilder().cleanTurn().entries);
    fs.writeFileSync(file, text.slice(0, -1));
    const r = await repairJsonlLog(file, clock);
    expect(r.ok).toBe(true);
    expect(read()).toBe(text);
  });

  it('refuses a log corrupt before its end and leaves the file untouched', async () => {
    const lines = logText(new LogBuilder().cleanTurn().startTurn().entries).split('\n');
    lines[4] = '{"seq":5,"kind":"tool/ca';
    const text = lines.join('\n');
    fs.writeFileSync(file, text);
    const r = await repairJsonlLog(file, clock);
    expect(r).toMatchObject({ ok: false, violations: [{ violation: 'bad-json', line: 5 }] });
    expect(read()).toBe(text);
    // A structural defect before the open end is refused as well.
    const e = new LogBuilder().cleanTurn().startTurn().startStep().entries;
    e.splice(3, 1);
    fs.writeFileSync(file, logText(e));
    const refused = await repairJsonlLog(file, clock);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.violations[0]).toMatchObject({ violation: 'seq-gap', seq: 5 });
  });
});
