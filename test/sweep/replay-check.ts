/**
 * I12 on every seed: the world's log, replayed through the machines with
 * its recorded outcomes (`replayThroughMachines`), must come back byte for
 * byte. A log replay refuses (`NotReplayableError`) fails the seed too,
 * unless its reason is on the allow-list below — which is empty, and should
 * stay so: a reason goes there only with a note on why it cannot be timed.
 */
import { NotReplayableError } from '../../replay/errors.js';
import { replayThroughMachines } from '../../replay/replay.js';
import type { WorldRun } from './run-world.js';
import { sweepTools } from './tools.js';

/** Reasons a sweep log may be refused, each a regex over the error message. Keep it empty. */
export const NOT_REPLAYABLE_ALLOWED: readonly RegExp[] = [];

export type ReplayVerdict = { ok: true } | { ok: true; refused: string } | { ok: false; problem: string };

/** Contract: never rejects; `ok: false` names the first differing line (both versions) or the refusal. */
export async function checkReplay(run: WorldRun): Promise<ReplayVerdict> {
  try {
    const r = await replayThroughMachines(run.h.entries(), sweepTools({ started: [] }));
    if (r.identical) return { ok: true };
    const line = r.firstDifference! - 1;
    const want = r.original.split('\n')[line] ?? '(end of log)';
    const got = r.text.split('\n')[line] ?? '(nothing)';
    return { ok: false, problem: `I12: replay differs at line ${line + 1}${r.note ? ` (${r.note})` : ''}\n    logged:   ${want.slice(0, 400)}\n    replayed: ${got.slice(0, 400)}` };
  } catch (err) {
    if (!(err instanceof NotReplayableError)) return { ok: false, problem: `I12: replay threw ${String(err)}` };
    if (NOT_REPLAYABLE_ALLOWED.some((re) => re.test(err.message))) return { ok: true, refused: err.message };
    return { ok: false, problem: `I12: not replayable: ${err.message}` };
  }
}
