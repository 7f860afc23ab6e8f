/**
 * What a caller asks of a running session besides input: a compaction
 * (logged as `session/compact`; one asked while a compaction runs joins it and
 * is not logged), a cancel (logged as `session/cancel` only when the session
 * would act on it), and the end (`session/end`, the running turn cancelled,
 * nothing queued started).
 */
import type { Actor } from 'xstate';
import type { Recorder } from '../../log/recorder.js';
import type { CompactionOutput } from '../../machines/compaction.machine.js';
import type { sessionMachine } from '../../machines/session.machine.js';
import type { Admission } from './admission.js';
import type { TurnWatch } from './between-turns.js';
import type { Lifecycle } from './lifecycle.js';

/** Contract: never rejects; resolves undefined when the compaction could not start (crashed, closing, the log refused the request). */
export function compactNow(actor: Actor<typeof sessionMachine>, recorder: Recorder, life: Lifecycle, by: string): Promise<CompactionOutput | undefined> {
  return new Promise<CompactionOutput | undefined>((resolve) => {
    if (life.crashed || life.closing) return resolve(undefined);
    const target = (actor.getSnapshot().context.compactions ?? 0) + 1;
    const sub = actor.subscribe({
      next: (s) => {
        if ((s.context.compactions ?? 0) < target) return;
        sub.unsubscribe();
        resolve(s.context.lastCompaction);
      },
      error: () => resolve(undefined),
    });
    if (!actor.getSnapshot().can({ type: 'session.compact.requested' })) return;
    try {
      recorder.append({ kind: 'session/compact', by });
    } catch {
      sub.unsubscribe();
      return resolve(undefined);
    }
    actor.send({ type: 'session.compact.requested' });
  });
}

/** Contract: appends `session/cancel` only for a cancel the session acts on (a turn or compaction runs, none is being cancelled, nothing crashed). */
export function cancelNow(actor: Actor<typeof sessionMachine>, recorder: Recorder, life: Lifecycle, by: string): void {
  if (!life.crashed && !life.closing && actor.getSnapshot().can({ type: 'session.cancel.requested', cause: by })) {
    recorder.append({ kind: 'session/cancel', by });
    actor.send({ type: 'session.cancel.requested', cause: by });
  }
}

/** Contract: the log ends with every turn ended; resolves once `close` has (unless `keepOpen`). */
export async function endSession(o: { actor: Actor<typeof sessionMachine>; recorder: Recorder; life: Lifecycle; input: Admission; turns: TurnWatch; close: () => Promise<void> }, by: string, keepOpen: boolean): Promise<void> {
  const { actor, life } = o;
  if (life.closing || !life.started) return o.close();
  // Nothing more starts; input held while plugins start is logged, and stays queued in the log, for a resume.
  life.ending = true;
  if (o.input.held) await o.input.ready;
  const s = actor.getSnapshot();
  try {
    if (!life.crashed) o.recorder.append({ kind: 'session/end', by });
  } catch {}
  if (!life.crashed && s.status === 'active' && s.value !== 'idle') {
    const rest = o.turns.nextRest();
    actor.send({ type: 'session.cancel.requested', cause: by });
    await rest;
  }
  if (!keepOpen) await o.close();
}
