/**
 * `bridle replay --machines`: the log re-run through the machines with its
 * recorded outcomes (I12) and compared byte for byte. No tool runs, no model
 * is called; the built-in tools (and `delegate`, where the log offered it)
 * are only validated against. A log whose `session/start` names a loop
 * (ADR 0085) replays through that loop, the product's same module, or is
 * refused by name.
 */
import { LoopReplayError, NotReplayableError } from '../replay/errors.js';
import { replayThroughMachines } from '../replay/replay.js';
import type { OfferedLoop } from '../runtime/loop-identity.js';
import { toolsOfLog } from '../replay/setup.js';
import type { Entry } from '../log/entries.js';
import { builtinTools } from '../tools/index.js';

export interface MachineVerdict {
  identical: boolean;
  /** 1-based line of the first difference, with both versions of it. */
  firstDifference?: number;
  logged?: string;
  replayed?: string;
  note?: string;
  /** Why replay could not run this log through the machines at all. */
  notReplayable?: string;
  /** The named refusal, when it was the loop (ADR 0085): the log names a loop the product does not run. */
  code?: LoopReplayError['code'];
}

/** Contract: never rejects for any parsed log; a log replay refuses comes back as `notReplayable`. */
export async function replayMachines(entries: readonly Entry[], loop?: OfferedLoop): Promise<MachineVerdict> {
  try {
    const r = await replayThroughMachines(entries, toolsOfLog(entries, builtinTools()), loop ? { loop } : {});
    if (r.identical) return { identical: true };
    const i = r.firstDifference! - 1;
    const v: MachineVerdict = { identical: false, firstDifference: r.firstDifference!, logged: r.original.split('\n')[i] ?? '', replayed: r.text.split('\n')[i] ?? '' };
    if (r.note) v.note = r.note;
    return v;
  } catch (err) {
    if (err instanceof LoopReplayError) return { identical: false, notReplayable: err.message, code: err.code };
    if (err instanceof NotReplayableError) return { identical: false, notReplayable: err.message };
    return { identical: false, notReplayable: `replay failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}

const clip = (s: string | undefined) => (s && s.length > 300 ? `${s.slice(0, 300)}…` : (s ?? ''));

/** One line, or three for a difference, for people. */
export function formatMachineVerdict(v: MachineVerdict, entries: number): string[] {
  if (v.identical) return [`machines: replays byte for byte (${entries} entries)`];
  if (v.notReplayable) return [`machines: not replayable: ${v.notReplayable}`];
  return [`machines: differs at line ${v.firstDifference}${v.note ? ` (${v.note})` : ''}`, `  logged:   ${clip(v.logged) || '(nothing)'}`, `  replayed: ${clip(v.replayed) || '(nothing)'}`];
}
