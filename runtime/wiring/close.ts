/**
 * Closing a session: the actors stopped, the plugins' own `session/close`
 * duties run (an MCP server's process stopped), the log flushed and the
 * store closed — even when the flush fails — then the host's rows unmounted.
 */
import type { Actor } from 'xstate';
import type { Recorder } from '../../log/recorder.js';
import type { sessionMachine } from '../../machines/session.machine.js';
import type { HookProblem } from '../../plugins/hooks/pipeline.js';
import type { HookRegistry } from '../../plugins/hooks/registry.js';
import type { LogStore } from '../../log/store.js';

interface Closed {
  id: string;
  actor: Actor<typeof sessionMachine>;
  hooks: HookRegistry;
  reportHook: (p: HookProblem) => void;
  recorder: Recorder;
  store: LogStore;
  /** Runs after the store is closed: the host's rows are unmounted here. */
  onClose?: () => void | Promise<void>;
}

/** Contract: rejects with the flush's failure (a `LogNotDurableError`) or the store's close's, after closing everything anyway. */
export async function closeSession(o: Closed): Promise<void> {
  o.actor.stop();
  // Plugins stop what they started before the log and the host go.
  await o.hooks.parallel('session/close', { session: o.id }, (listener, problem) => {
    try {
      o.reportHook({ hook: 'session/close', listener, problem });
    } catch {}
  });
  let failure: unknown;
  try {
    await o.recorder.flush();
  } catch (err) {
    failure = err;
  }
  try {
    await o.store.close();
  } catch (err) {
    failure ??= err;
  }
  await o.onClose?.();
  if (failure !== undefined) throw failure;
}
