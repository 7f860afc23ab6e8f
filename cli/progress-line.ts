/**
 * A running call's progress on the terminal (ADR 0065): one line per report,
 * at most one a second per call — the first, then whatever is newest when a
 * second has passed, and always the one that says it is complete — so a
 * server that reports a thousand steps prints a handful of lines. Never
 * logged: the feed's `tool.progress` is ephemeral.
 */
import type { SessionFeedEvent } from '../runtime/wiring/feed.js';
import { visible } from './visible.js';

type Progress = Extract<SessionFeedEvent, { type: 'tool.progress' }>;

/** Contract: pure; the line a report prints (no terminal control, no newline). */
export function progressLine(p: Progress): string {
  const figure = p.total !== undefined ? `${p.progress}/${p.total}` : `${p.progress}`;
  return `  … ${visible(p.name)}: ${figure}${p.message ? ` · ${visible(p.message.slice(0, 160))}` : ''}`;
}

/** Contract: the returned printer writes at most one line per call per `everyMs`, and every report that completes its total. */
export function progressPrinter(out: NodeJS.WritableStream, now: () => number = () => performance.now(), everyMs = 1000) {
  const last = new Map<string, number>();
  return (p: Progress): void => {
    const t = now();
    const done = p.total !== undefined && p.progress >= p.total;
    const before = last.get(p.callId);
    if (!done && before !== undefined && t - before < everyMs) return;
    last.set(p.callId, t);
    out.write(`${progressLine(p)}\n`);
  };
}
