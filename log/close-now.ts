/**
 * Closing an open turn at once, for a process that must exit now (a second
 * Ctrl-C): the same drafts crash repair would append on the next resume,
 * written synchronously so the log left behind already verifies.
 */
import type { Entry } from './entries.js';
import type { Recorder } from './recorder.js';
import { planRepair, type RepairOptions } from './repair.js';

/**
 * Contract: synchronous; appends nothing when nothing is open or the log is
 * not repairable; never throws for a log the recorder itself wrote. The
 * entries reach the store's write order before it returns (a JSONL store has
 * written them; fsync is left to the OS).
 */
export function closeOpenTurnNow(recorder: Recorder, closeAs: NonNullable<RepairOptions['closeAs']>): Entry[] {
  const plan = planRepair(recorder.entries, { closeAs });
  if (!plan.ok) return [];
  return plan.drafts.map((d) => recorder.append(d));
}
