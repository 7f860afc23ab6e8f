/**
 * A compaction the caller asks for (`session.compact`): logged as
 * `session/compact`, then requested of the machine; one asked while a
 * compaction runs joins it and is not logged.
 */
import type { Actor } from 'xstate';
import type { Recorder } from '../../log/recorder.js';
import type { CompactionOutput } from '../../machines/compaction.machine.js';
import type { sessionMachine } from '../../machines/session.machine.js';
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
