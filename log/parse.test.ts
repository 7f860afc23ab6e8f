import { describe, expect, it } from 'vitest';
import { LogParser, parseLog } from './parse.js';
import { LogCorruptError } from './errors.js';

const start = '{"seq":1,"at":"2026-01-01T00:00:00.000Z","kind":"session/start","id":"s","cwd":"/w","model":"m","depth":0,"parent":null,"format":1}';
const turn = '{"seq":2,"at":"2026-01-01T00:00:00.000Z","kind":"turn/start","turn":"t1","input":"x"}';

describe('parseLog', () => {
  it('reads valid lines', () => {
    const r = parseLog(`${start}\n${turn}\n`);
    expect(r.entries.map((e) => e.kind)).toEqual(['session/start', 'turn/start']);
    expect(r.torn).toBeUndefined();
  });
  it('reports a torn last line instead of failing', () => {
    const r = parseLog(`${start}\n${turn.slice(0, 20)}`);
    expect(r.entries).toHaveLength(1);
    expect(r.torn).toEqual({ line: 2, text: turn.slice(0, 20) });
  });
  it('names the line of a bad entry', () => {
    expect(() => parseLog(`${start}\n{"seq":2,"at":"2026-01-01T00:00:00.000Z","kind":"turn/start","turn":"bad"}\n`)).toThrow(/line 2: turn\/start entry fails its schema/);
  });
  it('refuses an unknown kind unless it is marked ignorable', () => {
    const unknown = '{"seq":2,"at":"2026-01-01T00:00:00.000Z","kind":"future/thing"}';
    expect(() => parseLog(`${start}\n${unknown}\n`)).toThrow(LogCorruptError);
    const r = parseLog(`${start}\n${unknown.replace('}', ',"ignorable":true}')}\n`);
    expect(r.skipped).toBe(1);
  });
  it('a non-JSON line before the end is corruption, not a torn tail', () => {
    expect(() => parseLog(`${start}\nnot json\n${turn}\n`)).toThrow(/line 2: not JSON/);
  });
  it('a line that is JSON null (or any non-object) is a bad entry, not a TypeError', () => {
    for (const line of ['null', '42', '"text"', '[1,2]', 'true']) {
      let caught: unknown;
      try {
        parseLog(`${start}\n${line}\n`);
      } catch (err) {
        caught = err;
      }
      expect(caught, line).toBeInstanceOf(LogCorruptError);
      expect(caught, line).toMatchObject({ violation: 'bad-entry', line: 2 });
    }
    // A torn-looking last line that is whole JSON null is not torn: it is read, and refused.
    expect(() => parseLog(`${start}\nnull`)).toThrow(/line 2: null, not an entry object/);
  });
  it('a line ending in CR LF is refused as bad-line-end, though JSON.parse would take it', () => {
    expect(() => parseLog(`${start}\r\n${turn}\n`)).toThrow(expect.objectContaining({ violation: 'bad-line-end', line: 1 }));
    expect(() => parseLog(`${start}\n${turn}\r`)).toThrow(expect.objectContaining({ violation: 'bad-line-end', line: 2 }));
  });
  it('the line-by-line parser reads what parseLog reads, and keeps the entries before a bad line', () => {
    const p = new LogParser();
    p.line(start);
    p.line(turn);
    expect(p.end().entries.map((e) => e.kind)).toEqual(['session/start', 'turn/start']);
    const q = new LogParser();
    q.line(start);
    expect(() => q.line('{oops')).toThrow(/line 2: not JSON/);
    expect(q.entries).toHaveLength(1);
    expect(new LogParser().end({ text: '{"seq":1,"at":"20', bytes: 17 }).torn).toEqual({ line: 1, text: '{"seq":1,"at":"20', bytes: 17 });
  });
});
