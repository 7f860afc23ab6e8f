/**
 * A log several processes wrote, cut where each one began. A crash (or a
 * second Ctrl-C, which exits at once) ends a process mid-turn; the next one
 * repairs the log (`log/repair.ts`) and resumes from it. Replay runs each
 * segment through a session of its own, stops it where the process stopped,
 * and appends the repair as the plan says.
 */
import { closeOrphanCompaction } from '../log/context/orphan.js';
import type { Draft, Entry, EntryOf } from '../log/entries.js';
import { planRepair, type RepairOptions } from '../log/repair.js';

export interface Segment {
  /** 0-based index of the first entry the segment's session writes; it starts from the entries before it. */
  from: number;
  /** Where its live run stops: the log's end, or the first entry written after its process ended. */
  to: number;
  /** The repair that closed what the process left open, appended after `to` as `planRepair` plans it. */
  closing?: Draft[];
}

const stripped = (e: Entry): string => {
  const { seq: _seq, at: _at, ...rest } = e;
  return JSON.stringify(rest);
};
const matches = (drafts: readonly Draft[], entries: readonly Entry[], at: number) =>
  drafts.every((d, k) => entries[at + k] !== undefined && stripped(entries[at + k]!) === JSON.stringify(d));

/** The torn line a `torn-tail` note describes, rebuilt to the same length (its text is gone; only its size is logged). */
function tornOf(repair: EntryOf<'repair'>): RepairOptions['torn'] {
  return repair.line !== undefined && repair.bytes !== undefined ? { line: repair.line, text: 'x'.repeat(repair.bytes), bytes: repair.bytes } : undefined;
}

/** How the repair closed the open turn: after a crash, or as a second Ctrl-C does (aborted by the user). */
function closeAsOf(entries: readonly Entry[], at: number): RepairOptions['closeAs'] {
  for (let i = at; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.kind === 'turn/start') return undefined;
    if (e.kind === 'turn/end' && (e.reason === 'aborted' || e.reason === 'interrupted')) return { reason: e.reason, ...(e.cause !== undefined ? { cause: e.cause } : {}) };
  }
  return undefined;
}

/**
 * Contract: pure. The first segment starts after `session/start`; each
 * process that went on with the log starts one where it logged
 * `session/reopen` (format 2). A `repair` a resume wrote ends one: when
 * `planRepair` of the entries before it plans what follows, those drafts
 * close the segment. The note a session writes on load for an orphaned
 * compaction (right after its reopening) is the new session's to write;
 * the note a live session writes after a failed append is the same
 * process's.
 */
export function segmentsOf(entries: readonly Entry[]): Segment[] {
  const out: Segment[] = [];
  let from = 1;
  for (let i = 1; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.kind === 'session/reopen') {
      if (i > from) {
        out.push({ from, to: i });
        from = i;
      }
      continue;
    }
    // A turn the live session closed after a failed append (runtime/session-fault.ts): the same process went on, and so does replay.
    if (e.kind !== 'repair' || e.found === 'turn-fault') continue;
    const before = entries.slice(0, i);
    const onLoad = closeOrphanCompaction(before);
    if (onLoad.length > 0 && matches(onLoad, entries, i)) {
      i += onLoad.length - 1;
      continue;
    }
    const torn = e.found === 'torn-tail' ? tornOf(e) : undefined;
    const closeAs = closeAsOf(entries, i);
    const plan = planRepair(before, { ...(torn ? { torn } : {}), ...(closeAs ? { closeAs } : {}) });
    const { seq: _seq, at: _at, ...asLogged } = e;
    const closing = plan.ok && plan.drafts.length > 0 ? plan.drafts : [asLogged as Draft];
    out.push({ from, to: i, closing });
    from = i + closing.length;
    i = from - 1;
  }
  out.push({ from, to: entries.length });
  return out;
}
