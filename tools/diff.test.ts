import { describe, expect, it } from 'vitest';
import { changeOf, diffLines } from './diff.js';

const render = (lines: ReturnType<typeof diffLines>) => lines.map((l) => `${l.op}${l.text}`);

describe('diffLines', () => {
  it('keeps common lines and shows the replaced one as removed then added', () => {
    expect(render(diffLines('a\nb\nc\n', 'a\nB\nc\n'))).toEqual([' a', '-b', '+B', ' c']);
  });
  it('shows every line of both sides once, in order', () => {
    const lines = diffLines('x\ny\nz', 'y\nq\nz\nw');
    expect(lines.filter((l) => l.op !== '+').map((l) => l.text)).toEqual(['x', 'y', 'z']);
    expect(lines.filter((l) => l.op !== '-').map((l) => l.text)).toEqual(['y', 'q', 'z', 'w']);
  });
  it('a new file is all added lines; empty text no lines', () => {
    expect(render(diffLines('', 'hi\nthere\n'))).toEqual(['+hi', '+there']);
    expect(diffLines('', '')).toEqual([]);
  });
  it('past the size cap still shows both sides whole', () => {
    const big = Array.from({ length: 2100 }, (_, i) => `l${i}`).join('\n');
    const other = Array.from({ length: 2100 }, (_, i) => `m${i}`).join('\n');
    const lines = diffLines(big, other);
    expect(lines).toHaveLength(4200);
  });
});

describe('changeOf', () => {
  it('edit_file: old_text → new_text; write_file: the new content', () => {
    expect(changeOf('edit_file', { path: 'a.ts', old_text: 'x = 1', new_text: 'x = 2' })).toEqual({
      tool: 'edit_file', path: 'a.ts', lines: [{ op: '-', text: 'x = 1' }, { op: '+', text: 'x = 2' }],
    });
    expect(changeOf('write_file', { path: 'b', content: 'hi\n' })).toEqual({ tool: 'write_file', path: 'b', lines: [{ op: '+', text: 'hi' }] });
  });
  it('nothing for other tools or arguments that are not the tool\'s', () => {
    expect(changeOf('bash', { command: 'ls', path: 'x' })).toBeUndefined();
    expect(changeOf('edit_file', { path: 'a' })).toBeUndefined();
    expect(changeOf('write_file', 'not json')).toBeUndefined();
  });
});
