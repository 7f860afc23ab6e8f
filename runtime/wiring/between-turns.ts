/**
 * The host's duties at a turn boundary, which the machine cannot do itself:
 * the checkpoint, the `turn/end` hooks (in turn order, idle reported only
 * after they settled), a compaction or wake the machine asked for, and the
 * callers waiting for idle. A crash is caught here too: the open turn closed
 * best effort, every waiter answered.
 */
import type { Actor } from 'xstate';
import { closeOpenTurnNow } from '../../log/close-now.js';
import { nthTurn } from '../../log/ids.js';
import type { Recorder } from '../../log/recorder.js';
import type { sessionMachine } from '../../machines/session.machine.js';
import type { TurnOutput } from '../../machines/turn.machine.js';
import type { HookProblem } from '../../plugins/hooks/pipeline.js';
import type { HookRegistry } from '../../plugins/hooks/registry.js';
import type { TurnEndPayload } from '../../ports/hooks.js';
import { SessionCrashedError } from '../session-fault.js';
import type { Lifecycle } from './lifecycle.js';
import { TurnEndCode } from '../../log/codes.js';

export interface TurnWatch {
  /** Resolves once no turn runs and none is queued, with the last turn's outcome, after its `turn/end` listeners settled. */
  idleNow(): Promise<TurnOutput | undefined>;
  /** Resolves at the next rest (idle or crash), whatever is queued: `end` waits for the turn it cancelled. */
  nextRest(): Promise<unknown>;
}

interface Watched {
  actor: Actor<typeof sessionMachine>;
  recorder: Recorder;
  hooks: HookRegistry;
  reportHook: (p: HookProblem) => void;
  life: Lifecycle;
  /** Turns the log held when the session was created: the first checkpoint is for the turn after them. */
  priorTurns: number;
  onCrash: (err: SessionCrashedError) => void;
}

const crashedOutput = (life: Lifecycle): TurnOutput => ({ turn: '', reason: 'error', steps: 0, code: TurnEndCode.SESSION_CRASHED, cause: life.crashed?.message ?? '', leftoverSteer: [], leftoverInject: [] });

/** Contract: subscribes to `actor` (before it starts); appends only checkpoints and, on a crash, the closing of the open turn. */
export function watchTurns(o: Watched): TurnWatch {
  const { actor, recorder, life } = o;
  const ends = turnEnds(o.hooks, o.reportHook);
  let checkpointed = o.priorTurns;
  let waiters: ((t: TurnOutput | undefined) => void)[] = [];
  const release = (t: TurnOutput | undefined) => {
    const w = waiters;
    waiters = [];
    w.forEach((f) => f(t));
  };
  actor.subscribe({
    next: (snap) => {
      if (snap.value !== 'idle') return;
      const ctx = snap.context;
      if (ctx.turns > checkpointed) {
        checkpointed = ctx.turns;
        if (ctx.last) ends.dispatch(ctx.last);
        // A checkpoint only saves replay time; one the store refuses is left out (resume replays the tail instead),
        // and the next append that fails ends its turn the ordinary way.
        try {
          recorder.append({ kind: 'checkpoint', turn: nthTurn(ctx.turns), snapshot: actor.getPersistedSnapshot() });
        } catch {}
      }
      if (ctx.compactPending && !life.ending) return void actor.send({ type: 'session.compact.requested' });
      if (ctx.followups.length > 0 && !life.ending) return void actor.send({ type: 'session.wake.requested' });
      const w = waiters;
      waiters = [];
      const last = ctx.last;
      ends.after(() => w.forEach((f) => f(last)));
    },
    error: (err) => {
      life.crashed = new SessionCrashedError(err);
      // Best effort: leave a log that verifies, as a second Ctrl-C does; a store that is gone refuses this too.
      try {
        closeOpenTurnNow(recorder, { reason: 'error', code: TurnEndCode.SESSION_CRASHED, cause: life.crashed.message });
      } catch {}
      release(crashedOutput(life));
      o.onCrash(life.crashed);
    },
  });
  return {
    idleNow: () =>
      new Promise<TurnOutput | undefined>((resolve) => {
        // A crashed actor never goes idle again: waiting for it would never end.
        if (life.crashed) return resolve(crashedOutput(life));
        const s = actor.getSnapshot();
        if (s.value === 'idle' && s.context.followups.length === 0) {
          const last = s.context.last;
          ends.after(() => resolve(last));
        } else waiters.push(resolve);
      }),
    nextRest: () => new Promise<unknown>((resolve) => waiters.push(resolve)),
  };
}

/** The `turn/end` listeners of each ended turn, chained in turn order; `after` runs once every one dispatched so far settled. */
function turnEnds(hooks: HookRegistry, reportHook: (p: HookProblem) => void) {
  let chain: Promise<void> | undefined;
  return {
    dispatch(out: TurnOutput): void {
      if (!hooks.has('turn/end')) return;
      const payload: TurnEndPayload = { turn: out.turn, reason: out.reason, steps: out.steps, ...(out.code !== undefined ? { code: out.code } : {}), ...(out.cause !== undefined ? { cause: out.cause } : {}) };
      const next: Promise<void> = (chain ?? Promise.resolve()).then(async () => {
        await hooks.serial('turn/end', payload, (listener, problem) => {
          try {
            reportHook({ hook: 'turn/end', listener, problem, turn: out.turn });
          } catch {}
        });
        if (chain === next) chain = undefined;
      });
      chain = next;
    },
    after(f: () => void): void {
      if (chain) void chain.then(f);
      else f();
    },
  };
}
