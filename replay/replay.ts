/**
 * Replay through the machines (I12): a recorded log runs again through the
 * real session, turn, step, tool-call and compaction machines, with every
 * outcome taken from the log — model answers and retried failures, tool
 * outputs in their recorded completion order, decisions, approval answers,
 * pre-step verdicts, summaries, the clock — and with the input, cancels,
 * compactions and ends that reached the session sent again where the log
 * holds them (they are entries, ADR 0021). A log several processes wrote
 * (crash, repair, resume) is replayed process by process, the repair
 * appended as `log/repair.ts` plans it. No model is called and no tool runs.
 * The new log must equal the old one byte for byte. How it works:
 * `replay/driver.ts`.
 */
import { LOG_FORMAT, type SessionConfig } from '../log/entries-session.js';
import type { Entry, EntryOf } from '../log/entries.js';
import type { ToolDefinition } from '../ports/tools.js';
import { ReplayDriver } from './driver.js';
import { describeLoop, sameLoop, type OfferedLoop } from '../runtime/loop-identity.js';
import { LoopReplayError, NotReplayableError } from './errors.js';

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
  /** The loop the product runs, when a row module provides it: used when the log's `session/start` names the same one (ADR 0085). */
  loop?: OfferedLoop;
}

/** Contract: pure; the loop to replay through (undefined: bridle's own), or `LoopReplayError` when the log names one not offered. */
function loopFor(start: EntryOf<'session/start'>, offered: OfferedLoop | undefined): OfferedLoop | undefined {
  const logged = start.loop;
  if (!logged) return undefined;
  const named = `the log ran the loop ${describeLoop(logged)}`;
  if (!offered) throw new LoopReplayError('LOOP_UNAVAILABLE', `${named}; the product runs bridle's own loop`);
  if (!sameLoop(logged, offered.identity)) throw new LoopReplayError(logged.sha256 ? 'LOOP_MISMATCH' : 'LOOP_UNAVAILABLE', `${named}; the product's is ${describeLoop(offered.identity)}`);
  return offered;
}

const jsonl = (lines: readonly string[]) => (lines.length ? `${lines.join('\n')}\n` : '');

/**
 * Contract: runs no tool and calls no model; resolves with the replayed
 * bytes and where they first differ; throws `NotReplayableError` naming what
 * it cannot reproduce (a log that does not start with `session/start`, tools
 * other than the log's, an inbox no input can rebuild; `LoopReplayError` for a
 * loop the log names that `opts.loop` is not).
 */
export async function replayThroughMachines(entries: readonly Entry[], tools: readonly ToolDefinition[], opts: ReplayOptions = {}): Promise<ReplayResult> {
  const start = entries[0];
  if (start?.kind !== 'session/start') throw new NotReplayableError('the log does not begin with session/start');
  // Format 1 logged no inputs: when each arrived could only be guessed (ADR 0021).
  if (start.format < LOG_FORMAT) throw new NotReplayableError(`the log is format ${start.format}, written by an older bridle that did not log its inputs; replay through the machines needs format ${LOG_FORMAT} (bridle replay without --machines still verifies it)`);
  const loop = loopFor(start, opts.loop);
  const config: SessionConfig = { ...opts.config, ...start.config };
  const outcome = await new ReplayDriver(entries, tools, config, loop).run();
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
