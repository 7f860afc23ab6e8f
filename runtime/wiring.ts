/**
 * A running session: the machine `provideMachines` gave every seam to, and
 * the host duties the machine cannot do itself — the header, the opening of
 * a log it goes on with, checkpoints at turn boundaries, the wake, inputs
 * logged then admitted, the session's own hooks, close. It takes services
 * already resolved; `createSession` (runtime/session.ts) is what resolves
 * them, from composed rows.
 */
import { createActor, type InspectionEvent, type Observer, type Snapshot } from 'xstate';
import { type Draft, type Entry, LOG_FORMAT, type Origin, type SessionPolicy } from '../log/entries.js';
import { LogFormatError, LogNotDurableError } from '../log/errors.js';
import { draftNotDurable } from '../log/not-durable.js';
import { formatOf, pendingInputs } from '../log/inputs.js';
import { resumableTurn } from '../log/resumable.js';
import { closeOrphanCompaction, findOrphanCompaction } from '../log/context/orphan.js';
import { closeOpenTurnNow } from '../log/close-now.js';
import { Recorder, type EntryListener } from '../log/recorder.js';
import type { CompactionOutput } from '../machines/compaction.machine.js';
import type { InputMode } from '../machines/session.machine.js';
import type { PreStepDecision, TurnOutput } from '../machines/turn.machine.js';
import type { FileSystem } from '../ports/fs.js';
import type { Subprocess } from '../ports/subprocess.js';
import type { SandboxService } from '../ports/sandbox.js';
import type { ToolRegistry } from '../ports/tool-registry.js';
import type { Answerer, ApprovalService } from '../ports/approval.js';
import type { ContextSettings, LoopSettings } from '../ports/loop.js';
import type { HookRegistry } from '../plugins/hooks/registry.js';
import type { Host } from '../plugins/host.js';
import type { TurnEndPayload } from '../ports/hooks.js';
import type { ModelProvider } from '../ports/model.js';
import type { Clock } from '../ports/clock.js';
import type { LogStore } from '../ports/store.js';
import type { PromptRegistry } from './prompt/registry.js';
import { sessionConfig, type Configured } from './session-config.js';
import { SessionCrashedError } from './session-fault.js';
import type { DeltaSink } from './stream-model.js';
import { provideMachines } from './provide-machines.js';
import { SessionClosedError, type BridleSession } from './bridle-session.js';
import { faultInspected } from './fault-injection.js';

export { SessionClosedError, type BridleSession } from './bridle-session.js';

/** Everything a session is wired from: the host's services, resolved, and the duties of whoever opened it. */
export interface Wiring extends SessionDuties {
  id: string;
  host: Host;
  cwd: string;
  bridleHome: string;
  model: ModelProvider;
  modelName: string;
  store: LogStore;
  clock: Clock;
  tools: ToolRegistry;
  /** The tools' world: files through `fs`, commands through `subprocess`, nothing else. */
  fs: FileSystem;
  subprocess: Subprocess;
  hooks: HookRegistry;
  prompt: PromptRegistry;
  approval: ApprovalService;
  /** The session's sandbox, which `never` decides by (ADR 0052). */
  sandbox?: SandboxService;
  loop: LoopSettings;
  context: ContextSettings;
  /** What `session/start` records of the settings (only what was set). */
  configured: Configured;
  /** What the session may do without asking, as `session/start` records it (ADR 0027). */
  policy?: SessionPolicy;
  /** Lets the `session` service's `inject` reach the actor once it exists. */
  bindInject: (inject: (text: string) => void) => void;
  /** Appended as the session opens, before any queued input is handed to it (a writer's `session/takeover`). */
  opening?: readonly Draft[];
  /** Runs after the store is closed: the host's rows are unmounted here. */
  onClose?: () => void | Promise<void>;
}

/** What the opener of a session (a CLI command, the server, a test) hands it besides the product. */
export interface SessionDuties {
  /** Who answers `ask` approvals (a terminal, WebSocket clients, an ACP client); none: an `ask` is denied as unavailable. */
  answerer?: Answerer;
  /** A fixed system prompt, byte for byte, instead of the prompt registry's (replay passes the logged one). */
  system?: string;
  /** How a retry waits; tests pass one that does not. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Live chunks, for display; not logged. */
  onChunk?: DeltaSink;
  /** The most an answer may hold before it is cut `OUTPUT_TOO_LARGE` (default `MAX_ANSWER_BYTES`); tests pass a smaller one. */
  maxAnswerBytes?: number;
  /** Every entry this session appends, from its first (a new log's `session/start`, written before `createSession` returns). */
  onEntry?: EntryListener;
  preStep?: (input: { turn: string; text: string }) => Promise<PreStepDecision>;
  /** Entries of an existing log, when the session continues one. */
  existing?: readonly Entry[];
  /**
   * How `existing` came to be: by default it is a log this session goes on with (it logs `session/reopen` and is
   * handed the input the log holds queued); `fresh`: only the header this same session would have written (replay's
   * first segment); `logged`: the reopening is in `existing` already (replay's later segments).
   */
  opened?: 'fresh' | 'logged';
  /** Input waits for this as for a plugin still starting (replay holds a reopened session's queued input until its log has the opening). */
  startGate?: Promise<void>;
  /** A persisted session snapshot to start from instead of the initial state (resume: `restoreSessionSnapshot(existing)`). */
  snapshot?: Snapshot<unknown>;
  depth?: number;
  parent?: string | null;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
}

/** The event that admits a logged input (`session/input` at `seq`). */
const admitted = (seq: number, text: string, mode: InputMode, origin: Origin) =>
  ({ type: 'session.input.received', seq, text, mode, ...(origin !== 'user' ? { origin } : {}) }) as const;

export function wireSession(o: Wiring): BridleSession {
  const recorder = new Recorder(o.store, o.clock, o.existing ?? []);
  if (o.onEntry) recorder.onEntry(o.onEntry);
  if (recorder.entries.length === 0) {
    recorder.append({ kind: 'session/start', id: o.id, cwd: o.cwd, model: o.modelName, depth: o.depth ?? 0, parent: o.parent ?? null, format: LOG_FORMAT, ...sessionConfig(o.configured), ...(o.policy ? { policy: o.policy } : {}) });
  } else if (formatOf(recorder.entries) < LOG_FORMAT) {
    // An older log has no inputs in it: what it had queued cannot be told from what it took (ADR 0021).
    throw new LogFormatError(formatOf(recorder.entries), LOG_FORMAT, 'continuing it');
  }
  // Going on with a log is said first (`session/reopen`, a takeover), then what loading it found to close.
  for (const d of o.opening ?? []) recorder.append(d);
  // A compaction a crash left open between turns is closed on load (I9); inside an open turn it is repair's to close.
  const all = recorder.entries;
  if (findOrphanCompaction(all) && all.findLastIndex((e) => e.kind === 'turn/start') <= all.findLastIndex((e) => e.kind === 'turn/end')) {
    for (const d of closeOrphanCompaction(all)) recorder.append(d);
  }
  const { machine, context, reportHook } = provideMachines(o, recorder);
  const hooks = o.hooks;
  // Every entry as it is appended (the `session/entry` hook). A listener's throw is reported after the append that
  // caused it returns, so other listeners see entries in log order; a report about this hook is not emitted again.
  recorder.onEntry((entry) => {
    if (!hooks.has('session/entry') || (entry.kind === 'hook/report' && entry.hook === 'session/entry')) return;
    hooks.emit('session/entry', entry, (listener, problem) =>
      queueMicrotask(() => {
        try {
          reportHook({ hook: 'session/entry', listener, problem });
        } catch {}
      }),
    );
  });
  // A log that ends inside a turn waiting on an approval: that turn goes on, before anything queued (ADR 0027).
  const resumed = (o.existing?.length ?? 0) > 0 && o.opened !== 'fresh' ? resumableTurn(o.existing!) : undefined;
  const priorTurns = recorder.entries.filter((e) => e.kind === 'turn/start').length - (resumed ? 1 : 0);
  const actor = createActor(machine, { input: { maxSteps: o.loop.maxSteps, turns: priorTurns }, inspect: faultInspected(o.inspect), ...(o.snapshot ? { snapshot: o.snapshot } : {}) });
  // A plugin's advisory is input like any other: logged, then admitted (its own turn's failures report a failed save).
  o.bindInject((text) => void send(text, 'inject', 'system').catch(() => undefined));

  let checkpointed = priorTurns;
  // The `turn/end` listeners of each ended turn, in turn order; the session reports idle only after they settled.
  let turnEnds: Promise<void> | undefined;
  const dispatchTurnEnd = (out: TurnOutput) => {
    if (!hooks.has('turn/end')) return;
    const payload: TurnEndPayload = { turn: out.turn, reason: out.reason, steps: out.steps, ...(out.code !== undefined ? { code: out.code } : {}), ...(out.cause !== undefined ? { cause: out.cause } : {}) };
    const chain: Promise<void> = (turnEnds ?? Promise.resolve()).then(async () => {
      await hooks.serial('turn/end', payload, (listener, problem) => {
        try {
          reportHook({ hook: 'turn/end', listener, problem, turn: out.turn });
        } catch {}
      });
      if (turnEnds === chain) turnEnds = undefined;
    });
    turnEnds = chain;
  };
  /** Calls `f` once every `turn/end` listener dispatched so far settled: now, when none is running. */
  const afterTurnEnds = (f: () => void) => (turnEnds ? void turnEnds.then(f) : f());
  let ending = false;
  let waiters: ((t: TurnOutput | undefined) => void)[] = [];
  let crashed: SessionCrashedError | undefined;
  actor.subscribe({
    next: (snap) => {
      if (snap.value !== 'idle') return;
      const ctx = snap.context;
      if (ctx.turns > checkpointed) {
        checkpointed = ctx.turns;
        if (ctx.last) dispatchTurnEnd(ctx.last);
        // A checkpoint only saves replay time; one the store refuses is left out (resume replays the tail instead),
        // and the next append that fails ends its turn the ordinary way.
        try {
          recorder.append({ kind: 'checkpoint', turn: `t${ctx.turns}`, snapshot: actor.getPersistedSnapshot() });
        } catch {}
      }
      if (ctx.compactPending && !ending) {
        actor.send({ type: 'session.compact.requested' });
        return;
      }
      if (ctx.followups.length > 0 && !ending) {
        actor.send({ type: 'session.wake.requested' });
        return;
      }
      const w = waiters;
      waiters = [];
      const last = ctx.last;
      afterTurnEnds(() => w.forEach((f) => f(last)));
    },
    error: (err) => {
      crashed = new SessionCrashedError(err);
      // Best effort: leave a log that verifies, as a second Ctrl-C does; a store that is gone refuses this too.
      try {
        closeOpenTurnNow(recorder, { reason: 'error', code: 'SESSION_CRASHED', cause: crashed.message });
      } catch {}
      const w = waiters;
      waiters = [];
      for (const f of w) f(crashedOutput());
    },
  });
  actor.start();

  // Plugins still starting (an MCP server connecting) hold input back, in order, so the first request's tools do
  // not depend on how fast a server answered; so does replay's gate (`startGate`), until the log says the opening is
  // done. Without either, input goes straight in — logged and admitted in the same tick (ADR 0021).
  const gates = [...(o.host.starting() ? [o.host.ready().catch(() => undefined)] : []), ...(o.startGate ? [o.startGate] : [])];
  let held = gates.length > 0;
  const started: Promise<void> = held ? Promise.all(gates).then(() => void (held = false)) : Promise.resolve();
  /** Runs `f` now, or once the session has started. */
  const afterStart = <T>(f: () => T | Promise<T>): Promise<T> => (held ? started.then(f) : Promise.resolve(f()));
  // A session that goes on from a log is handed, once and in log order, every input it logged and no turn took (ADR 0021).
  if ((o.existing?.length ?? 0) > 0 && o.opened !== 'fresh') {
    void afterStart(() => {
      if (resumed) {
        const { from, input, origin, steps, blocks, finish, settled, decided } = resumed;
        // A call the log holds the answer of goes on with that answer, not asked again (ADR 0031).
        const answered = decided.length > 0 ? { answered: Object.fromEntries(decided.map((d) => [d.callId, d.answer])) } : {};
        actor.send({ type: 'session.turn.resumed', seq: from ?? 0, text: input, ...(origin ? { origin } : {}), resume: { steps, step: { blocks, finish, settled, ...answered } } });
      }
      for (const e of pendingInputs(recorder.entries)) actor.send(admitted(e.seq, e.text, e.mode, e.origin));
    });
  }

  let closing: Promise<void> | undefined;
  // The store is closed even when the last flush fails; the failure (a LogNotDurableError) is the caller's to report. Closing twice closes once.
  const close = () => (closing ??= closeOnce());
  const closeOnce = async () => {
    actor.stop();
    // Plugins stop what they started (an MCP server's process) before the log and the host go.
    await hooks.parallel('session/close', { session: o.id }, (listener, problem) => {
      try {
        reportHook({ hook: 'session/close', listener, problem });
      } catch {}
    });
    let failure: unknown;
    try {
      await recorder.flush();
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
  };

  /** Logs the input, then hands it to the session in the same tick: the log's order is the order the session admits (ADR 0021). */
  function admit(text: string, mode: InputMode, origin: Origin = 'user'): number {
    if (crashed) throw crashed;
    if (closing) throw new SessionClosedError();
    const e = recorder.append({ kind: 'session/input', mode, text, origin });
    // A session being ended starts nothing more: the input stays queued in the log, for a resume.
    if (!ending) actor.send(admitted(e.seq, text, mode, origin));
    return e.seq;
  }
  /** The input's save; one that fails is noted in the log (`log/not-durable`), as a machine notes its own (ADR 0017). */
  async function saveInput(seq: number): Promise<void> {
    try {
      await recorder.flush();
    } catch (err) {
      const note = err instanceof LogNotDurableError ? { ...draftNotDurable(err), input: seq } : undefined;
      try {
        if (note) recorder.append(note);
      } catch {}
      throw err;
    }
  }
  async function send(text: string, mode: InputMode = 'followup', origin?: Origin): Promise<number> {
    if (held) await started;
    const seq = admit(text, mode, origin);
    await saveInput(seq);
    return seq;
  }

  const crashedOutput = (): TurnOutput => ({ turn: '', reason: 'error', steps: 0, code: 'SESSION_CRASHED', cause: crashed?.message ?? '', leftoverSteer: [], leftoverInject: [] });
  const idle = () => afterStart(idleNow);
  const idleNow = () =>
    new Promise<TurnOutput | undefined>((resolve) => {
      // A crashed actor never goes idle again: waiting for it would never end.
      if (crashed) return resolve(crashedOutput());
      const s = actor.getSnapshot();
      if (s.value === 'idle' && s.context.followups.length === 0) {
        const last = s.context.last;
        afterTurnEnds(() => resolve(last));
      } else waiters.push(resolve);
    });

  return {
    id: o.id,
    host: o.host,
    recorder,
    actor,
    hooks,
    send,
    cancel: (by = 'user') =>
      afterStart(() => {
        // A cancel the session would not act on (nothing runs, a cancel is already under way, a crashed turn is being closed) changes nothing, and is not logged.
        if (!crashed && !closing && actor.getSnapshot().can({ type: 'session.cancel.requested', cause: by })) {
          recorder.append({ kind: 'session/cancel', by });
          actor.send({ type: 'session.cancel.requested', cause: by });
        }
        return idleNow();
      }),
    idle,
    ready: () => started,
    run: async (text, origin) => {
      if (held) await started;
      const seq = admit(text, 'followup', origin);
      const done = idle();
      // A save that fails is the turn's to report: its own durability points fail too, and it ends LOG_NOT_DURABLE.
      await saveInput(seq).catch(() => undefined);
      const out = await done;
      if (crashed) throw crashed;
      return out!;
    },
    compact: (by = 'user') => afterStart(() => compactNow(by)),
    prompt: context.prompt,
    meter: context.meter,
    close,
    end: async (by = 'user', eo = {}) => {
      if (closing) return close();
      // Nothing more starts; input held while plugins start is logged, and stays queued in the log, for a resume.
      ending = true;
      if (held) await started;
      const s = actor.getSnapshot();
      try {
        if (!crashed) recorder.append({ kind: 'session/end', by });
      } catch {}
      if (!crashed && s.status === 'active' && s.value !== 'idle') {
        const rest = new Promise<unknown>((resolve) => waiters.push(resolve));
        actor.send({ type: 'session.cancel.requested', cause: by });
        await rest;
      }
      if (!eo.keepOpen) await close();
    },
  };

  function compactNow(by: string): Promise<CompactionOutput | undefined> {
    return new Promise<CompactionOutput | undefined>((resolve) => {
      if (crashed || closing) return resolve(undefined);
      const target = (actor.getSnapshot().context.compactions ?? 0) + 1;
      const sub = actor.subscribe({
        next: (s) => {
          if ((s.context.compactions ?? 0) < target) return;
          sub.unsubscribe();
          resolve(s.context.lastCompaction);
        },
        error: () => resolve(undefined),
      });
      // One asked while a compaction runs joins it (the session takes no second request then): not logged.
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
}
