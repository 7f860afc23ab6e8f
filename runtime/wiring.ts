/**
 * The session machine with every seam provided — the model, the tools, the
 * log, the clock, approvals — and the host duties the machine cannot do
 * itself: the header, checkpoints at turn boundaries, and the wake. It takes
 * services already resolved; `createSession` (runtime/session.ts) is what
 * resolves them, from composed rows.
 */
import { createActor, fromPromise, type Actor, type InspectionEvent, type Observer, type Snapshot } from 'xstate';
import { type ApprovalRule, type Entry, LOG_FORMAT, type Origin, type ToolSpec } from '../log/entries.js';
import { closeOrphanCompaction, findOrphanCompaction } from '../log/context/orphan.js';
import { closeOpenTurnNow } from '../log/close-now.js';
import { Recorder, type EntryListener } from '../log/recorder.js';
import { compactionMachine, type CompactionOutput } from '../machines/compaction.machine.js';
import { sessionMachine, type InputMode } from '../machines/session.machine.js';
import { stepMachine } from '../machines/step.machine.js';
import { toolCallMachine, type ToolCallContext } from '../machines/tool-call.machine.js';
import { turnMachine, type PreStepDecision, type TurnOutput } from '../machines/turn.machine.js';
import { toolSpec } from '../tools/index.js';
import type { FileSystem } from '../ports/fs.js';
import type { Subprocess } from '../ports/subprocess.js';
import type { ToolDefinition } from '../ports/tools.js';
import type { ToolRegistry } from '../ports/tool-registry.js';
import type { Answerer, ApprovalService } from '../ports/approval.js';
import type { ContextSettings, LoopSettings } from '../ports/loop.js';
import { decideByPolicy } from '../safety/approval.js';
import { exactRule, rulesFromLog } from '../safety/approval-rules.js';
import { askApproval } from './ask-approval.js';
import { renderForRules } from '../plugins/hooks/canonical.js';
import { createToolPipeline, type HookProblem } from '../plugins/hooks/pipeline.js';
import type { HookRegistry } from '../plugins/hooks/registry.js';
import type { Host } from '../plugins/host.js';
import type { CallFacts } from '../ports/hooks.js';
import { createContextEngine } from './context/engine.js';
import type { ContextMeter } from './context/meter.js';
import type { ModelProvider } from '../ports/model.js';
import type { Clock } from '../ports/clock.js';
import type { LogStore } from '../ports/store.js';
import type { PromptRegistry } from './prompt/registry.js';
import { prepareRequestAction } from './prepare-request.js';
import { sessionConfig, type Configured } from './session-config.js';
import { closeFaultedTurn, SessionCrashedError } from './session-fault.js';
import { streamModelActor, type DeltaSink } from './stream-model.js';
import { validateCallAction } from './validate-call.js';

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
  loop: LoopSettings;
  context: ContextSettings;
  /** What `session/start` records of the settings (only what was set). */
  configured: Configured;
  /** Lets the `session` service's `inject` reach the actor once it exists. */
  bindInject: (inject: (text: string) => void) => void;
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
  /** Every entry this session appends, from its first (a new log's `session/start`, written before `createSession` returns). */
  onEntry?: EntryListener;
  preStep?: (input: { turn: string; text: string }) => Promise<PreStepDecision>;
  /** Entries of an existing log, when the session continues one. */
  existing?: readonly Entry[];
  /** A persisted session snapshot to start from instead of the initial state (resume: `restoreSessionSnapshot(existing)`). */
  snapshot?: Snapshot<unknown>;
  depth?: number;
  parent?: string | null;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
}

export interface BridleSession {
  readonly id: string;
  /** The host the session's rows are mounted on: its services by key (`session.host.get(MODEL)`). */
  readonly host: Host;
  readonly recorder: Recorder;
  readonly actor: Actor<typeof sessionMachine>;
  /** Hooks and guards around every call and turn (plugins register through their rows; this is the registry itself). */
  readonly hooks: HookRegistry;
  /**
   * Queue input: `followup` runs as its own turn, `steer` joins the running turn's next step, `inject` rides along without waking.
   * Throws `SessionCrashedError` (code `SESSION_CRASHED`) once the session has crashed: the input would be lost.
   */
  send(text: string, mode?: InputMode, origin?: Origin): void;
  /** Cancels the running turn; resolves when the session is idle again. */
  cancel(cause?: string): Promise<TurnOutput | undefined>;
  /** Resolves when no turn runs and none is queued, with the last turn's outcome. */
  idle(): Promise<TurnOutput | undefined>;
  /**
   * `send(text)` then `idle()`; `origin` marks harness input (a resume note) so the model never takes it for the user's words.
   * Rejects with `SessionCrashedError` when the session has crashed, before or while the turn runs.
   */
  run(text: string, origin?: Origin): Promise<TurnOutput>;
  /**
   * Compacts the context now when idle, else right after the running turn;
   * input arriving meanwhile is queued. Resolves with the outcome (undefined
   * if the compaction could not start).
   */
  compact(): Promise<CompactionOutput | undefined>;
  /** The system prompt's sections: plugins add theirs here. */
  readonly prompt: PromptRegistry;
  /** How big the next request is, against the model's window. */
  readonly meter: ContextMeter;
  close(): Promise<void>;
  /**
   * Resolves once every plugin that starts asynchronously (an MCP server) has
   * started or failed; input sent before then waits, so the first turn sees
   * every tool those plugins register. Contract: never rejects.
   */
  ready(): Promise<void>;
  /**
   * Ends the session at rest: cancels the running turn (it ends `aborted`)
   * or compaction, starts nothing queued (queued input is dropped), then
   * closes as `close` does. Contract: the log ends with every turn ended;
   * resolves once it is flushed and the store is closed.
   */
  end(): Promise<void>;
}

const defaultSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

export function wireSession(o: Wiring): BridleSession {
  const recorder = new Recorder(o.store, o.clock, o.existing ?? []);
  if (o.onEntry) recorder.onEntry(o.onEntry);
  if (recorder.entries.length === 0) {
    recorder.append({ kind: 'session/start', id: o.id, cwd: o.cwd, model: o.modelName, depth: o.depth ?? 0, parent: o.parent ?? null, format: LOG_FORMAT, ...sessionConfig(o.configured) });
  }
  // What the registry holds, derived again only when it changes (a plugin mounted or unmounted a tool).
  let derived: { version: number; byName: Map<string, ToolDefinition>; specs: ToolSpec[] } | undefined;
  const current = () => {
    if (derived?.version !== o.tools.version) {
      const list = o.tools.list();
      derived = { version: o.tools.version, byName: new Map(list.map((t) => [t.name, t])), specs: list.map(toolSpec) };
    }
    return derived;
  };
  const byName = { get: (name: string) => current().byName.get(name) };
  // A compaction a crash left open between turns is closed on load (I9); inside an open turn it is repair's to close.
  const all = recorder.entries;
  if (findOrphanCompaction(all) && all.findLastIndex((e) => e.kind === 'turn/start') <= all.findLastIndex((e) => e.kind === 'turn/end')) {
    for (const d of closeOrphanCompaction(all)) recorder.append(d);
  }
  const context = createContextEngine({ recorder, id: o.id, cwd: o.cwd, modelName: o.modelName, depth: o.depth ?? 0, prompt: o.prompt, tools: () => current().specs, model: o.model, context: o.context, ...(o.system !== undefined ? { system: o.system } : {}) });
  const flushLog = fromPromise<void, void>(() => recorder.flush());
  const record = (_: unknown, draft: Parameters<Recorder['append']>[0]) => void recorder.append(draft);
  const { measureContext, planPrune, planSummary, requestSummary } = context.actors;
  const compaction = compactionMachine.provide({ actions: { record }, actors: { measureContext, planPrune, planSummary, requestSummary, flushLog } });
  const sleep = o.sleep ?? defaultSleep;
  const policy = o.approval.policy;
  const hooks = o.hooks;
  const reportHook = (p: HookProblem) => {
    const d: Parameters<Recorder['append']>[0] = { kind: 'hook/report', hook: p.hook, listener: p.listener, problem: p.problem };
    for (const k of ['turn', 'step', 'callId'] as const) if (p[k] !== undefined) d[k] = p[k];
    recorder.append(d);
  };
  const pipeline = createToolPipeline(hooks, reportHook);
  const rules: ApprovalRule[] = [...o.approval.rules, ...rulesFromLog(recorder.entries)];
  const argsOf = (c: ToolCallContext) => (c.validation?.ok ? c.validation.args : {});
  const facts = (c: ToolCallContext): CallFacts => ({
    turn: c.turn,
    step: c.step,
    callId: c.callId,
    name: c.name,
    arguments: c.arguments,
    args: argsOf(c),
    readOnly: c.validation?.ok === true && c.validation.readOnly,
    idempotent: c.validation?.ok === true && c.validation.idempotent,
    rendered: renderForRules(argsOf(c), o.cwd),
  });
  const present = (c: ToolCallContext): string => {
    try {
      return byName.get(c.name)!.present(argsOf(c));
    } catch {
      return `${c.name} ${c.arguments}`;
    }
  };

  const toolCall = toolCallMachine.provide({
    actions: { record, validateCall: validateCallAction(() => current().byName) },
    // A store durable on append (memory) has nothing to flush: the call skips its two flushLog actors (ADR 0007).
    guards: { isLogDurable: () => recorder.isDurable },
    actors: {
      flushLog,
      decideCall: fromPromise(async ({ input }) => {
        const call = facts(input);
        return pipeline.decide(call, decideByPolicy(policy, call, rules));
      }),
      askApproval: fromPromise(async ({ input, signal }) => {
        const call = facts(input);
        const request = { callId: call.callId, name: call.name, arguments: call.arguments, reason: input.reason ?? '', presented: present(input), always: exactRule(call.name, call.rendered) };
        const answer = await askApproval({ answerer: o.answerer, timeoutMs: o.approval.answerTimeoutMs }, request, signal);
        if (answer.outcome === 'allowed-always' && answer.rule) rules.push(answer.rule);
        return answer;
      }),
      executeTool: fromPromise(async ({ input, signal }) => {
        const tool = byName.get(input.name)!;
        return pipeline.execute({ call: facts(input), tool, args: argsOf(input), ctx: { fs: o.fs, subprocess: o.subprocess, signal, callId: input.callId } });
      }),
    },
  });
  const step = stepMachine.provide({
    actions: { record, prepareRequest: prepareRequestAction(recorder, context.header) },
    actors: {
      toolCall,
      streamModel: streamModelActor(o.model, o.onChunk, hooks, reportHook),
      wait: fromPromise<void, { ms: number }>(({ input, signal }) => sleep(input.ms, signal)),
    },
  });
  const turn = turnMachine.provide({
    actions: { record },
    guards: { isOverThreshold: context.isOverThreshold },
    actors: {
      step,
      flushLog,
      compaction,
      runPreStep: fromPromise(async ({ input }) =>
        pipeline.preStep(input, async (p) => (o.preStep ? o.preStep(p) : { kind: 'enter' as const, text: p.text })),
      ),
    },
  });
  const machine = sessionMachine.provide({
    actors: { turn, compaction, closeFaultedTurn: fromPromise(({ input }) => closeFaultedTurn(recorder, input.turn, input.error)) },
  });
  const priorTurns = recorder.entries.filter((e) => e.kind === 'turn/start').length;
  const actor = createActor(machine, { input: { maxSteps: o.loop.maxSteps, retry: o.loop.retry, turns: priorTurns }, inspect: o.inspect, ...(o.snapshot ? { snapshot: o.snapshot } : {}) });
  o.bindInject((text) => actor.send({ type: 'session.input.received', text, mode: 'inject' }));

  let checkpointed = priorTurns;
  let ending = false;
  let waiters: ((t: TurnOutput | undefined) => void)[] = [];
  let crashed: SessionCrashedError | undefined;
  actor.subscribe({
    next: (snap) => {
      if (snap.value !== 'idle') return;
      const ctx = snap.context;
      if (ctx.turns > checkpointed) {
        checkpointed = ctx.turns;
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
      for (const f of w) f(ctx.last);
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

  // Plugins still starting (an MCP server connecting): input waits for them, in order, so the first
  // request's tools do not depend on how fast a server answered. Without any, input goes straight in.
  let held: (() => void)[] | undefined;
  let closed = false;
  const started: Promise<void> = o.host.starting()
    ? ((held = []),
      o.host
        .ready()
        // A plugin whose start failed is undone by the host; saying so to the user is the plugin's (mcp/server).
        .catch(() => undefined)
        .then(() => {
          const waiting = held ?? [];
          held = undefined;
          if (!closed) for (const f of waiting) f();
        }))
    : Promise.resolve();
  const deliver = (f: () => void) => (held ? held.push(f) : f());
  const afterStart = <T>(f: () => Promise<T>): Promise<T> => (held ? started.then(f) : f());

  const close = async () => {
    closed = true;
    held = held && [];
    actor.stop();
    // Plugins stop what they started (an MCP server's process) before the log and the host go.
    await hooks.parallel('session/close', { session: o.id }, (listener, problem) => {
      try {
        reportHook({ hook: 'session/close', listener, problem });
      } catch {}
    });
    await recorder.flush();
    await o.store.close();
    await o.onClose?.();
  };

  const crashedOutput = (): TurnOutput => ({ turn: '', reason: 'error', steps: 0, code: 'SESSION_CRASHED', cause: crashed?.message ?? '', leftoverSteer: [], leftoverInject: [] });
  const idle = () => afterStart(idleNow);
  const idleNow = () =>
    new Promise<TurnOutput | undefined>((resolve) => {
      // A crashed actor never goes idle again: waiting for it would never end.
      if (crashed) return resolve(crashedOutput());
      const s = actor.getSnapshot();
      if (s.value === 'idle' && s.context.followups.length === 0) resolve(s.context.last);
      else waiters.push(resolve);
    });

  return {
    id: o.id,
    host: o.host,
    recorder,
    actor,
    hooks,
    send: (text, mode = 'followup', origin) => {
      if (crashed) throw crashed;
      deliver(() => actor.send({ type: 'session.input.received', text, mode, ...(origin ? { origin } : {}) }));
    },
    cancel: (cause) => {
      deliver(() => actor.send({ type: 'session.cancel.requested', cause }));
      return idle();
    },
    idle,
    ready: () => started,
    run: async (text, origin) => {
      if (crashed) throw crashed;
      deliver(() => actor.send({ type: 'session.input.received', text, mode: 'followup', ...(origin ? { origin } : {}) }));
      const out = await idle();
      if (crashed) throw crashed;
      return out!;
    },
    compact: () => afterStart(compactNow),
    prompt: context.prompt,
    meter: context.meter,
    close,
    end: async () => {
      ending = true;
      // Queued input is dropped at an end, whether or not the plugins have started yet.
      held = held && [];
      await started;
      const s = actor.getSnapshot();
      if (s.status === 'active' && s.value !== 'idle') {
        const rest = new Promise<unknown>((resolve) => waiters.push(resolve));
        actor.send({ type: 'session.cancel.requested', cause: 'close' });
        await rest;
      }
      await close();
    },
  };

  function compactNow(): Promise<CompactionOutput | undefined> {
    return new Promise<CompactionOutput | undefined>((resolve) => {
      if (crashed) return resolve(undefined);
      const target = (actor.getSnapshot().context.compactions ?? 0) + 1;
      const sub = actor.subscribe({
        next: (s) => {
          if ((s.context.compactions ?? 0) < target) return;
          sub.unsubscribe();
          resolve(s.context.lastCompaction);
        },
        error: () => resolve(undefined),
      });
      actor.send({ type: 'session.compact.requested' });
    });
  }
}
