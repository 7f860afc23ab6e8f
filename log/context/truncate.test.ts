import { describe, expect, it } from 'vitest';
import { indexAfterCodePoints, indexBeforeLastCodePoints, truncateMiddle } from './truncate.js';

const note = (c: { codePoints: number; lines: number }) => `[cut ${c.codePoints}/${c.lines}]`;
const wellFormed = (s: string) => s === Buffer.from(s, 'utf8').toString('utf8') && !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);

describe('code-point-safe truncation (I9)', () => {
  it('keeps an emoji on the head boundary whole', () => {
    // Head of 3 code points ends exactly on the emoji: "ab😀".
    const s = `ab😀${'x'.repeat(50)}😀yz`;
    const t = truncateMiddle(s, 3, 3, note);
    expect(t.text.startsWith('ab😀[cut')).toBe(true);
    expect(t.text.endsWith('😀yz')).toBe(true);
    expect(wellFormed(t.text)).toBe(true);
    expect(t.cutCodePoints).toBe(50);
  });

  it('never splits a surrogate pair whatever the cut points', () => {
    const s = '😀a👍b🎉c'.repeat(20);
    for (let head = 0; head < 30; head++) {
      for (let tail = 0; tail < 30; tail += 7) {
        const t = truncateMiddle(s, head, tail, note);
        expect(wellFormed(t.text)).toBe(true);
        expect(Array.from(t.text).slice(0, head).join('')).toBe(Array.from(s).slice(0, head).join(''));
      }
    }
  });

  it('counts what it cut in code points and lines, and leaves short text alone', () => {
    const s = `head\n${'😀\n'.repeat(10)}tail`;
    const t = truncateMiddle(s, 5, 4, note);
    expect(t.text).toBe('head\n[cut 20/10]tail');
    expect(truncateMiddle('short', 3, 3, note)).toEqual({ text: 'short', cutCodePoints: 0, cutLines: 0 });
  });

  it('index helpers step over pairs', () => {
    expect(indexAfterCodePoints('😀a', 1)).toBe(2);
    expect(indexBeforeLastCodePoints('a😀', 1)).toBe(1);
    expect(indexAfterCodePoints('ab', 9)).toBe(2);
    expect(indexBeforeLastCodePoints('ab', 9)).toBe(0);
  });
});
