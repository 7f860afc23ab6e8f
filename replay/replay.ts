/**
 * Replay through the machines (I12): a recorded log runs again through the
 * real session, turn, step, tool-call and compaction machines, with every
 * outcome taken from the log — model answers and retried failures, tool
 * outputs in their recorded completion order, decisions, approval answers,
 * pre-step verdicts, summaries, the clock — and with the input and cancels
 * re-issued where their effects show: steer and inject at the delivery point
 * that logged them, followups so the checkpoints' inboxes match, cancels
 * just before the first entry they caused. A log several processes wrote
 * (crash, repair, resume) is replayed process by process, the repair
 * appended as `log/repair.ts` plans it. No model is called and no tool runs.
 * The new log must equal the old one byte for byte. How it works:
 * `replay/driver.ts`.
 */
import type { Entry, SessionConfig } from '../log/entries.js';
import type { ToolDefinition } from '../ports/tools.js';
import { ReplayDriver } from './driver.js';
import { NotReplayableError } from './errors.js';

export { NotReplayableError };

export interface ReplayResult {
  /** The replayed log, as JSONL (up to and including the first line that differs). */
  text: string;
  /** The recorded log, re-serialized the way the recorder writes it. */
  original: string;
  identical: boolean;
  /** 1-based line of the first difference, if any. */
  firstDifference?: number;
  /** Why the replay stopped short, when it did (no line to compare). */
  note?: string;
}

export interface ReplayOptions {
  /** Settings for logs written before `session/start` recorded them; a logged value wins. */
  config?: SessionConfig;
}

const jsonl = (lines: readonly string[]) => (lines.length ? `${lines.join('\n')}\n` : '');

/**
 * For a log written before `session/start` recorded its settings: a proactive
 * compaction proves a configured window and logs it (unless an overflow had
 * taught the meter a smaller one first).
 */
function windowOf(entries: readonly Entry[]): number | undefined {
  for (const e of entries) {
    if (e.kind === 'assistant/message' && e.finish.kind === 'error' && e.finish.code === 'CONTEXT_WINDOW_EXCEEDED') return undefined;
    if (e.kind === 'compaction/start') return e.trigger === 'proactive' ? e.window : undefined;
  }
  return undefined;
}

/**
 * Contract: runs no tool and calls no model; resolves with the replayed
 * bytes and where they first differ; throws `NotReplayableError` naming what
 * it cannot reproduce (a log that does not start with `session/start`, tools
 * other than the log's, an inbox no input can rebuild).
 */
export async function replayThroughMachines(entries: readonly Entry[], tools: readonly ToolDefinition[], opts: ReplayOptions = {}): Promise<ReplayResult> {
  const start = entries[0];
  if (start?.kind !== 'session/start') throw new NotReplayableError('the log does not begin with session/start');
  const inferred = start.config === undefined && opts.config?.contextWindow === undefined ? windowOf(entries) : undefined;
  const config: SessionConfig = { ...(inferred !== undefined ? { contextWindow: inferred } : {}), ...opts.config, ...start.config };
  const outcome = await new ReplayDriver(entries, tools, config).run();
  const original = jsonl(entries.map((e) => JSON.stringify(e)));
  const text = jsonl(outcome.lines);
  const res: ReplayResult = { text, original, identical: text === original && !outcome.difference };
  if (!res.identical) {
    const a = original.split('\n');
    const b = text.split('\n');
    const at = outcome.difference?.index ?? a.findIndex((line, i) => line !== b[i]);
    res.firstDifference = (at < 0 ? Math.min(a.length, b.length) : at) + 1;
    if (outcome.difference?.note) res.note = outcome.difference.note;
  }
  return res;
}
