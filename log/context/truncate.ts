/**
 * Cutting text on code points: a cut never splits a surrogate pair, so an
 * emoji on the boundary is kept whole or dropped whole (I9).
 */

/** The UTF-16 index after the first `n` code points of `s` (or `s.length`). */
export function indexAfterCodePoints(s: string, n: number): number {
  let i = 0;
  for (let k = 0; k < n && i < s.length; k++) i += isPairAt(s, i) ? 2 : 1;
  return i;
}

/** The UTF-16 index where the last `n` code points of `s` begin (or 0). */
export function indexBeforeLastCodePoints(s: string, n: number): number {
  let i = s.length;
  for (let k = 0; k < n && i > 0; k++) i -= i >= 2 && isPairAt(s, i - 2) ? 2 : 1;
  return i;
}

const isPairAt = (s: string, i: number): boolean => {
  const c = s.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff) return false;
  const d = s.charCodeAt(i + 1);
  return d >= 0xdc00 && d <= 0xdfff;
};

export interface Cut {
  text: string;
  /** Code points removed from the middle (0 when nothing was cut). */
  cutCodePoints: number;
  cutLines: number;
}

/**
 * Keeps the first `head` and last `tail` code points of `s` and puts `note(cut)`
 * between them; returns `s` unchanged when it is no longer than head + tail.
 * Contract: pure; never splits a surrogate pair.
 */
export function truncateMiddle(s: string, head: number, tail: number, note: (cut: { codePoints: number; lines: number }) => string): Cut {
  const a = indexAfterCodePoints(s, head);
  const b = Math.max(a, indexBeforeLastCodePoints(s, tail));
  if (b <= a) return { text: s, cutCodePoints: 0, cutLines: 0 };
  const middle = s.slice(a, b);
  let cps = 0;
  for (const _ of middle) cps++;
  const lines = middle.split('\n').length - 1;
  return { text: `${s.slice(0, a)}${note({ codePoints: cps, lines })}${s.slice(b)}`, cutCodePoints: cps, cutLines: lines };
}
