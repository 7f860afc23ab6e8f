/**
 * A session, wired and not yet started: the machine the `loop:agent` row's loop (`provideMachines`, unless a patch replaced it) gave
 * every seam to, and the host duties the machine cannot do itself, each in
 * its own part (`wiring/`): the opening of the log, admission of logged
 * inputs, the duties between turns, compaction on request, close. Nothing
 * runs until `start()`, so a caller subscribes first and sees everything
 * (ADR 0051). It takes services already resolved; `createSession`
 * (runtime/session.ts) is what resolves them, from composed rows.
 */
import { createActor } from 'xstate';
import type { Draft } from '../log/entries.js';
import { resumableTurn } from '../log/resumable.js';
import { Recorder } from '../log/recorder.js';
import type { LoopSettings } from '../ports/loop.js';
import type { Host } from '../plugins/host.js';
import type { Clock } from '../log/clock.js';
import type { LogStore } from '../log/store.js';
import type { AgentLoop } from './agent-loop.js';
import type { SessionServices } from './provide-machines.js';
import { SessionClosedError, type BridleSession } from './bridle-session.js';
import type { SessionOptions } from './session-options.js';
import { faultInspected } from './fault-injection.js';
import { SessionFeed } from './wiring/feed.js';
import { admission } from './wiring/admission.js';
import { watchTurns } from './wiring/between-turns.js';
import { closeSession } from './wiring/close.js';
import { cancelNow, compactNow, endSession } from './wiring/requests.js';
import type { Lifecycle } from './wiring/lifecycle.js';
import { appendOpening, checkContinuable, type Header } from './wiring/opening.js';
import { entryHook, feedEntries, feedStates, feedStatesWhileWatched } from './wiring/taps.js';

/** What `createSession` resolved from the rows for one session: its services, and what its log opens with. Not an option bag: nobody outside composes one. */
export interface SessionParts extends Omit<Header, 'cwd' | 'depth' | 'parent'>, SessionServices {
  host: Host;
  store: LogStore;
  clock: Clock;
  loop: LoopSettings;
  /** What provides the machines: the `loop:agent` row's loop (ADR 0077). */
  agentLoop: AgentLoop;
  /** Lets the `session` service's `inject` reach the actor once it exists. */
  bindInject: (inject: (text: string) => void) => void;
  opening?: readonly Draft[];
  /** Runs after the store is closed: the host's rows are unmounted here. */
  onClose?: () => void | Promise<void>;
}

/** Contract: appends nothing and starts nothing (`start()` does); throws `LogFormatError` for a log too old to continue. */
export function wireSession(o: SessionOptions, p: SessionParts): BridleSession {
  const existing = o.existing ?? [];
  checkContinuable(existing);
  const life: Lifecycle = { started: false, ending: false };
  const feed = new SessionFeed();
  const recorder = new Recorder(p.store, p.clock, existing);
  feedEntries(recorder, feed);
  const { machine, context, reportHook } = p.agentLoop.provide({ ...o, ...p, onChunk: (chunk, step) => feed.watched && feed.emit({ type: 'chunk.streamed', chunk, step }), onProgress: (call, r) => feed.emit({ type: 'tool.progress', ...call, ...r }) }, recorder);
  entryHook(recorder, p.hooks, reportHook);
  // A log that ends inside a turn waiting on an approval: that turn goes on, before anything queued (ADR 0027).
  const fromLog = existing.length > 0 && o.opened !== 'fresh';
  const resumed = fromLog ? resumableTurn(existing) : undefined;
  const priorTurns = existing.filter((e) => e.kind === 'turn/start').length - (resumed ? 1 : 0);
  let actorRef: BridleSession['actor'] | undefined;
  // An inspector of the caller's or the fault hook sees every actor from its creation, the feed's before it; with neither,
  // the feed's is attached only while someone watches (an unwatched session does no inspection work, #26).
  const inspected = faultInspected(o.inspect) !== undefined;
  const inspect = inspected ? faultInspected(feedStates(() => actorRef, feed, o.inspect)) : undefined;
  const actor = createActor(machine, { input: { maxSteps: p.loop.maxSteps, turns: priorTurns }, ...(inspect ? { inspect } : {}), ...(o.snapshot ? { snapshot: o.snapshot } : {}) });
  actorRef = actor;
  if (!inspected) feedStatesWhileWatched(actor, feed);
  const turns = watchTurns({ actor, recorder, hooks: p.hooks, reportHook, life, priorTurns, onCrash: (error) => feed.emit({ type: 'session.crashed', error }) });
  const input = admission({ actor, recorder, host: p.host, life, ...(o.startGate ? { startGate: o.startGate } : {}) });
  // A plugin's advisory is input like any other: logged, then admitted (its own turn's failures report a failed save).
  p.bindInject((text) => void input.send(text, 'inject', 'system').catch(() => undefined));
  const header: Header = { ...p, cwd: o.cwd, depth: o.depth ?? 0, parent: o.parent ?? null, ...(o.traceparent ? { traceparent: o.traceparent } : {}) };
  // The store is closed even when the last flush fails; the failure is the caller's to report. Closing twice closes once.
  const close = () => (life.closing ??= closeSession({ ...p, id: p.id, actor, recorder, reportHook }).finally(() => feed.emit({ type: 'session.closed' })));

  const session: BridleSession = {
    id: p.id,
    host: p.host,
    recorder,
    actor,
    hooks: p.hooks,
    subscribe: (listener) => feed.subscribe(listener),
    start: () => {
      if (life.closing) throw new SessionClosedError();
      if (life.started) return session;
      try {
        appendOpening(recorder, header);
      } catch (err) {
        // Nothing half-open is left: the log (and its lock) closed, the rows unmounted.
        void close().catch(() => undefined);
        throw err;
      }
      life.started = true;
      actor.start();
      input.open({ fromLog, ...(resumed ? { resumed } : {}) });
      return session;
    },
    send: input.send,
    // A cancel the session would not act on changes nothing and is not logged; it resolves when the session is idle again.
    cancel: (by = 'user') => input.afterStart(() => (cancelNow(actor, recorder, life, by), turns.idleNow())),
    idle: () => input.afterStart(turns.idleNow),
    ready: () => input.ready,
    run: async (text, origin) => {
      if (input.held) await input.ready;
      const seq = input.admit(text, 'followup', origin);
      const done = input.afterStart(turns.idleNow);
      // A save that fails is the turn's to report: its own durability points fail too, and it ends LOG_NOT_DURABLE.
      await input.saveInput(seq).catch(() => undefined);
      const out = await done;
      if (life.crashed) throw life.crashed;
      return out!;
    },
    compact: (by = 'user') => input.afterStart(() => compactNow(actor, recorder, life, by)),
    prompt: context.prompt,
    meter: context.meter,
    close,
    end: (by = 'user', eo = {}) => endSession({ actor, recorder, life, input, turns, close }, by, eo.keepOpen === true),
  };
  return session;
}
