/**
 * The current-time section (course ch. 6): the date and time, from the
 * session's clock by way of the log. Its time is the current turn's
 * `turn/start` stamp (the `{{now}}` variable), never a clock read at assembly:
 * so every step of a turn sends the same bytes (the provider's prompt cache
 * holds within a turn), the header changes at most once per turn and is then
 * logged like every header change, and replay, reading the same log, gives
 * the same text back. It lives in the system prompt, not in the history, so
 * a compaction that shadows every earlier message leaves it where it was.
 */
import type { PromptSection } from '../../ports/prompt.js';

export interface TimeSectionConfig {
  /** The time is shown to this many minutes, floored: a turn inside the same window sends the same header (and hits the cache across turns too). */
  refreshMinutes: number;
}

const MINUTE = 60_000;
const pad = (n: number) => String(n).padStart(2, '0');

/**
 * Contract: pure; the section's text for a turn that started at `now` (an ISO
 * time from the log), or undefined before any turn or for a time it cannot
 * read (the section is then left out, never a wrong date).
 */
export function timeText(now: string | undefined, c: TimeSectionConfig): string | undefined {
  const ms = now ? Date.parse(now) : Number.NaN;
  if (!Number.isFinite(ms)) return undefined;
  const step = c.refreshMinutes * MINUTE;
  const d = new Date(Math.floor(ms / step) * step);
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const weekday = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'][d.getUTCDay()];
  return `Current date and time: ${weekday} ${date} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC (as this turn began${c.refreshMinutes > 1 ? `, to ${c.refreshMinutes} minutes` : ''}).`;
}

/** Order 300: after the workspace (200), so a new time changes only the prompt's tail and the cached prefix before it stands. */
export const timeSection = (c: TimeSectionConfig): PromptSection => ({ id: 'time', order: 300, render: (vars) => timeText(vars.now, c) });
