/**
 * What listens to a session's log and actors on behalf of others: the feed
 * (every entry, every durable one, every state change of any actor in the
 * tree) and the plugins' `session/entry` hook.
 */
import type { Actor, InspectionEvent, Observer } from 'xstate';
import type { Recorder } from '../../log/recorder.js';
import type { sessionMachine } from '../../machines/session.machine.js';
import type { HookProblem } from '../../plugins/hooks/pipeline.js';
import type { HookRegistry } from '../../plugins/hooks/registry.js';
import type { SessionFeed } from './feed.js';

/** The log's entries, appended and durable, as feed events. */
export function feedEntries(recorder: Recorder, feed: SessionFeed): void {
  // Unwatched (a bench, an embedding that never subscribes): no event is built for nobody, twice an entry (#26).
  recorder.onEntry((entry) => feed.watched && feed.emit({ type: 'entry.appended', entry }));
  recorder.onDurable((entry) => feed.watched && feed.emit({ type: 'entry.saved', entry }));
}

/**
 * The inspector the session's actor system is created with: any actor's new snapshot is a `state.changed`
 * carrying the session machine's, then the caller's own inspector. Contract: never throws (a throw in an
 * inspector would crash the process).
 */
export function feedStates(actor: () => Actor<typeof sessionMachine> | undefined, feed: SessionFeed, own?: Observer<InspectionEvent> | ((e: InspectionEvent) => void)): (e: InspectionEvent) => void {
  return (e) => {
    const root = actor();
    if (e.type === '@xstate.snapshot' && root && feed.watched) feed.emit({ type: 'state.changed', snapshot: root.getSnapshot() });
    try {
      if (typeof own === 'function') own(e);
      else own?.next?.(e);
    } catch {}
  };
}

/**
 * The feed's inspector for a session created without one (no inspector of the caller's, no fault hook): attached to
 * the actor system only while the feed is watched, so an unwatched session's actors do no inspection work at all —
 * xstate builds its inspection events only for an observer (#26).
 */
export function feedStatesWhileWatched(actor: Actor<typeof sessionMachine>, feed: SessionFeed): void {
  feed.whileWatched(() => {
    const sub = actor.system.inspect(feedStates(() => actor, feed));
    return () => sub.unsubscribe();
  });
}

/**
 * Every entry as it is appended, to the `session/entry` hook. A listener's throw is reported after the append that
 * caused it returns, so other listeners see entries in log order; a report about this hook is not emitted again.
 */
export function entryHook(recorder: Recorder, hooks: HookRegistry, reportHook: (p: HookProblem) => void): void {
  recorder.onEntry((entry, line) => {
    if (!hooks.has('session/entry') || (entry.kind === 'hook/report' && entry.hook === 'session/entry')) return;
    hooks.emit(
      'session/entry',
      entry,
      (listener, problem) =>
        queueMicrotask(() => {
          try {
            reportHook({ hook: 'session/entry', listener, problem });
          } catch {}
        }),
      line,
    );
  });
}
