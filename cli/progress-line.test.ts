import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { progressLine, progressPrinter } from './progress-line.js';

const report = (progress: number, total?: number, message?: string) => ({ type: 'tool.progress' as const, callId: 't1.s1.c1', name: 'mcp__fx__slow', progress, ...(total !== undefined ? { total } : {}), ...(message ? { message } : {}) });

describe('progress on the terminal (ADR 0065)', () => {
  it('one line: the tool, the figures, the message, with no terminal control', () => {
    expect(progressLine(report(3, 10, 'copying\x1b[2J'))).toBe('  … mcp__fx__slow: 3/10 · copying␛[2J');
    expect(progressLine(report(4))).toBe('  … mcp__fx__slow: 4');
  });

  it('throttled: at most one line a second per call, and always the one that completes it', () => {
    const out = new PassThrough();
    let shown = '';
    out.on('data', (d) => (shown += d));
    let t = 0;
    const print = progressPrinter(out, () => t);
    for (let i = 1; i <= 100; i++) {
      t = i * 25;
      print(report(i, 100));
    }
    const lines = shown.trimEnd().split('\n');
    expect(lines[0]).toBe('  … mcp__fx__slow: 1/100');
    expect(lines.at(-1)).toBe('  … mcp__fx__slow: 100/100');
    expect(lines.length).toBeLessThanOrEqual(5);
  });
});
