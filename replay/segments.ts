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
  const m = /^line (\d+) was cut off mid-write \((\d+) bytes\)/.exec(repair.detail);
  return m ? { line: Number(m[1]), text: 'x'.repeat(Number(m[2])) } : undefined;
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

const checkpointOf = (e: Entry, turn: string) => e.kind === 'checkpoint' && e.turn === turn;
const isNoteFor = (e: Entry, end: Entry) => e.kind === 'log/not-durable' && e.upTo === end.seq;

/**
 * Contract: pure. The first segment starts after `session/start`; a `repair`
 * entry ends one, and so does a `turn/end` its checkpoint does not follow
 * (the process stopped before it). When `planRepair` of the entries before
 * a `repair` plans what follows, those drafts close the segment; when it is
 * the note a session writes on load for an orphaned compaction, the next
 * session writes it.
 */
export function segmentsOf(entries: readonly Entry[]): Segment[] {
  const out: Segment[] = [];
  let from = 1;
  for (let i = 1; i < entries.length; i++) {
    const e = entries[i]!;
    // A session checkpoints right after every turn it ends (after the note that its end could not be saved, if it
    // could not: ADR 0017): a turn/end followed by anything else is where its process stopped.
    if (e.kind === 'turn/end') {
      const k = i + 1 < entries.length && isNoteFor(entries[i + 1]!, e) ? i + 2 : i + 1;
      if (k < entries.length && !checkpointOf(entries[k]!, e.turn)) {
        out.push({ from, to: k });
        from = k;
        i = k - 1;
        continue;
      }
    }
    // A turn the live session closed after a failed append (runtime/session-fault.ts): the same process went on, and so does replay.
    if (e.kind !== 'repair' || e.found === 'turn-fault') continue;
    const before = entries.slice(0, i);
    const onLoad = closeOrphanCompaction(before);
    if (onLoad.length > 0 && matches(onLoad, entries, i)) {
      out.push({ from, to: i });
      from = i;
      i += onLoad.length - 1;
      continue;
    }
    const torn = e.found === 'torn-tail' ? tornOf(e) : undefined;
    const closeAs = closeAsOf(entries, i);
    const plan = planRepair(before, { ...(torn ? { torn } : {}), ...(closeAs ? { closeAs } : {}) });
    const closing = plan.ok && plan.drafts.length > 0 ? plan.drafts : [{ kind: 'repair', found: e.found, detail: e.detail } as Draft];
    out.push({ from, to: i, closing });
    from = i + closing.length;
    i = from - 1;
  }
  out.push({ from, to: entries.length });
  return out;
}
