/** Time in the log comes only from here: an injected clock, never `Date.now()` inside the log path. */
/** An injected clock: milliseconds since the epoch. */
export type Clock = () => number;

const DAY_MS = 86_400_000;
/** The largest time a `Date` holds, either side of the epoch. */
const MAX_TIME_MS = 8.64e15;
/** The day `date` is of (its first millisecond) and that date's characters as `toISOString` writes them, `T` included. */
let dayStart = NaN;
let date: number[] = [];
const ZERO = 48;

/**
 * Contract: pure; `new Date(ms).toISOString()`, the same string for every `ms` (a `RangeError` where that throws).
 * A log stamps every entry, and most stamps fall on the day of the one before: the date is taken from
 * `toISOString` once a day and kept; the time of day is whole milliseconds past midnight UTC (a `Date` has no leap
 * seconds), written here into the one string, without a `Date` or a string per part. A time that is not a whole
 * number of milliseconds in a `Date`'s range, or in a year not of four digits, goes to `toISOString`.
 */
export function isoTime(ms: number): string {
  if (!Number.isInteger(ms) || ms > MAX_TIME_MS || ms < -MAX_TIME_MS) return new Date(ms).toISOString();
  let t = ms - dayStart;
  if (!(t >= 0 && t < DAY_MS)) {
    dayStart = Math.floor(ms / DAY_MS) * DAY_MS;
    // `…THH:MM:SS.sssZ`: the time and the zone are always the last 13 characters, whatever the year's width.
    date = Array.from(new Date(dayStart).toISOString().slice(0, -13), (c) => c.charCodeAt(0));
    t = ms - dayStart;
  }
  if (date.length !== 11) return new Date(ms).toISOString();
  const h = Math.floor(t / 3_600_000);
  const m = Math.floor(t / 60_000) % 60;
  const s = Math.floor(t / 1000) % 60;
  const x = t % 1000;
  const d = date;
  return String.fromCharCode(
    d[0]!, d[1]!, d[2]!, d[3]!, d[4]!, d[5]!, d[6]!, d[7]!, d[8]!, d[9]!, d[10]!,
    ZERO + Math.floor(h / 10), ZERO + (h % 10), 58, ZERO + Math.floor(m / 10), ZERO + (m % 10), 58, ZERO + Math.floor(s / 10), ZERO + (s % 10),
    46, ZERO + Math.floor(x / 100), ZERO + (Math.floor(x / 10) % 10), ZERO + (x % 10), 90,
  );
}
