/**
 * Which tool calls of one answer may start now. Calls start in the model's
 * order; a run of read-only calls may overlap; a call that writes waits for
 * every earlier call and holds back every later one.
 */
export type CallPhase = 'pending' | 'ready' | 'running' | 'settled';

export interface CallSlot {
  callId: string;
  phase: CallPhase;
  readOnly: boolean;
}

/** Contract: pure; returns the ids of `ready` calls to release, in order. */
export function releasable(slots: readonly CallSlot[]): string[] {
  const out: string[] = [];
  let earlierUnsettled = false;
  for (const s of slots) {
    if (s.phase === 'settled') continue;
    if (s.phase === 'pending') break;
    if (s.phase === 'running') {
      if (!s.readOnly) break;
      earlierUnsettled = true;
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
