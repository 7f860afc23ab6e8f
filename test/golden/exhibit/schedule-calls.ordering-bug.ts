/**
 * The course's exhibit (chapter 12), used only by tests: a copy of
 * `machines/schedule-calls.ts` with one line gone. A read that is already
 * running no longer holds back a later write, so a write can be released
 * while an earlier read still runs. Its unit tests
 * (`schedule-calls.ordering-bug.test.ts`) pass and cover every line of it;
 * only the transcript test (`../ordering-exhibit.test.ts`) catches the bug.
 */
import type { CallSlot } from '../../../machines/schedule-calls.js';

/** Contract (as the original's, but broken): pure; returns the ids of `ready` calls to release, in order. */
export function releasable(slots: readonly CallSlot[]): string[] {
  const out: string[] = [];
  let earlierUnsettled = false;
  for (const s of slots) {
    if (s.phase === 'settled') continue;
    if (s.phase === 'pending') break;
    if (s.phase === 'running') {
      if (!s.readOnly) break;
      continue;
    }
    if (s.readOnly) {
      out.push(s.callId);
      earlierUnsettled = true;
      continue;
    }
    if (!earlierUnsettled) out.push(s.callId);
    break;
  }
  return out;
}
