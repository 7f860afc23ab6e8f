/**
 * The part of verification that follows the session's inputs (format 2, ADR 0021): inputs are entries,
 * and whatever takes one names it (`from`), once, in a mode and with the text the input has.
 */
import type { Entry, EntryOf } from './entries.js';

/** Records a violation at `e` (none: the log as a whole). */
export type Flag = (violation: string, e: Entry | undefined, message: string) => void;

export class InputLinks {
  private readonly inputs = new Map<number, { input: EntryOf<'session/input'>; taken: boolean }>();

  /** `linked`: the log is format 2 or later, so it logs its inputs. */
  constructor(
    readonly linked: boolean,
    private readonly flag: Flag,
  ) {}

  add(e: EntryOf<'session/input'>): void {
    if (!this.linked) this.flag('forged-entry', e, 'session/input in a format 1 log');
    this.inputs.set(e.seq, { input: e, taken: false });
  }

  /** `e` takes the input at `from`: one that was logged before it, in a mode and with the text it claims, not yet taken. */
  take(e: Entry, from: number | undefined, modes: readonly string[], text: string): void {
    const flag = this.flag;
    if (!this.linked) {
      if (from !== undefined) flag('bad-input-link', e, `${e.kind} names input seq ${from}, but a format 1 log logs no inputs`);
      return;
    }
    if (from === undefined) return flag('bad-input-link', e, `${e.kind} does not name the session/input it takes (from)`);
    const known = this.inputs.get(from);
    if (!known) return flag('bad-input-link', e, `${e.kind} takes input seq ${from}, which is not an earlier session/input`);
    if (known.taken) return flag('bad-input-link', e, `${e.kind} takes input seq ${from}, which an earlier entry already took`);
    if (!modes.includes(known.input.mode)) return flag('bad-input-link', e, `${e.kind} takes input seq ${from}, a ${known.input.mode}; it takes only ${modes.join(' or ')}`);
    if (known.input.text !== text) return flag('bad-input-link', e, `${e.kind} takes input seq ${from} but its text differs from the input's`);
    known.taken = true;
  }
}
