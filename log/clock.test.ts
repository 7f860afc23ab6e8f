import { describe, expect, it } from 'vitest';
import { isoTime } from './clock.js';

const builtin = (ms: number): string | RangeError => {
  try {
    return new Date(ms).toISOString();
  } catch (err) {
    return err as RangeError;
  }
};
const ours = (ms: number): string | RangeError => {
  try {
    return isoTime(ms);
  } catch (err) {
    return err as RangeError;
  }
};

describe('isoTime: the stamp of a log entry', () => {
  it("is toISOString's string for every time, whatever day the one before fell on", () => {
    const DAY = 86_400_000;
    const times: number[] = [0, -0, 1, -1, 999, 1000, 59_999, 3_599_999, DAY - 1, DAY, DAY + 1, -DAY, -DAY - 1, -DAY + 1];
    // Around today, a leap day, the years 0 and 9999/10000 (six-digit years), the ends of a Date's range and past them.
    for (const c of [Date.UTC(2026, 11, 3, 12, 0, 0, 7), Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(0, 0, 1), -62_198_755_200_000, 253_402_300_799_999, 253_402_300_800_000, 8.64e15, -8.64e15]) {
      for (const d of [-DAY - 1, -1, 0, 1, 61_001, DAY - 1, DAY]) times.push(c + d);
    }
    let seed = 7;
    for (let i = 0; i < 5000; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      times.push(Math.round((seed / 2 ** 31 - 0.5) * 2 * 4e12));
    }
    // Not whole milliseconds, not finite: toISOString decides (it truncates, or throws).
    times.push(1.5, -1.5, 0.999, NaN, Infinity, -Infinity);
    // In order and out of it: the kept day must never leak into a time of another day.
    for (const t of [...times, ...times.slice().reverse()]) {
      const want = builtin(t);
      const got = ours(t);
      if (want instanceof RangeError) expect(got, String(t)).toBeInstanceOf(RangeError);
      else expect(got, String(t)).toBe(want);
    }
  });
});
