/**
 * `createSession`: the session machine with every seam provided — the model,
 * the tools, the log, the clock, approvals — and the host duties the machine
 * cannot do itself: the header, checkpoints at turn boundaries, and the wake.
 */
import { createActor, fromPromise, type Actor, type InspectionEvent, type Observer } from 'xstate';
import { type Entry, LOG_FORMAT } from '../log/entries.js';
import { Recorder } from '../log/recorder.js';
import { sessionMachine, type InputMode } from '../machines/session.machine.js';
import type { RetryPolicy } from '../machines/retry-policy.js';
import { stepMachine } from '../machines/step.machine.js';
import { toolCallMachine, type ToolCallContext, type Validation } from '../machines/tool-call.machine.js';
import { turnMachine, type PreStepDecision, type TurnOutput } from '../machines/turn.machine.js';
import { executeTool } from '../tools/execute.js';
import { toolSpec } from '../tools/index.js';
import type { Shell, ToolDefinition } from '../tools/types.js';
import { validateCall } from '../tools/validate-call.js';
import { decideByPolicy, type Answerer, type ApprovalPolicy } from './approval.js';
import type { Clock, LogStore, ModelProvider } from './ports.js';
import { prepareRequestActor } from './prepare-request.js';
import { streamModelActor, type DeltaSink } from './stream-model.js';

export interface SessionOptions {
  id: string;
  /** The workspace: tools are confined to it. */
  cwd: string;
  bridleHome: string;
  model: ModelProvider;
  modelName: string;
  store: LogStore;
  clock: Clock;
  tools: ToolDefinition[];
  shell: Shell;
  system?: string;
  approval?: ApprovalPolicy;
  answerer?: Answerer;
  maxSteps?: number;
  retry?: RetryPolicy;
  /** How a retry waits; tests pass one that does not. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Live chunks, for display; not logged. */
  onChunk?: DeltaSink;
  preStep?: (input: { turn: string; text: string }) => Promise<PreStepDecision>;
  /** Entries of an existing log, when the session continues one. */
  existing?: readonly Entry[];
  depth?: number;
  parent?: string | null;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
}

export interface BridleSession {
  readonly id: string;
  readonly recorder: Recorder;
  readonly actor: Actor<typeof sessionMachine>;
  /** Queue input: `followup` runs as its own turn, `steer` joins the running turn's next step, `inject` rides along without waking. */
  send(text: string, mode?: InputMode): void;
  /** Cancels the running turn; resolves when the session is idle again. */
  cancel(cause?: string): Promise<TurnOutput | undefined>;
  /** Resolves when no turn runs and none is queued, with the last turn's outcome. */
  idle(): Promise<TurnOutput | undefined>;
  /** `send(text)` then `idle()`. */
  run(text: string): Promise<TurnOutput>;
  close(): Promise<void>;
}

const defaultSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

export const DEFAULT_SYSTEM =
  'You are a careful software engineer working in the user\'s workspace through tools. Read before you change; run commands to check your work; say plainly what you did and what you found.';

export function createSession(o: SessionOptions): BridleSession {
  const recorder = new Recorder(o.store, o.clock, o.existing ?? []);
  if (recorder.entries.length === 0) {
    recorder.append({ kind: 'session/start', id: o.id, cwd: o.cwd, model: o.modelName, depth: o.depth ?? 0, parent: o.parent ?? null, format: LOG_FORMAT });
  }
  const byName = new Map(o.tools.map((t) => [t.name, t]));
  const specs = o.tools.map(toolSpec);
  const system = o.system ?? DEFAULT_SYSTEM;
  const flushLog = fromPromise<void, void>(() => recorder.flush());
  const record = (_: unknown, draft: Parameters<Recorder['append']>[0]) => void recorder.append(draft);
  const sleep = o.sleep ?? defaultSleep;
  const policy = o.approval ?? 'ask';

  const toolCall = toolCallMachine.provide({
    actions: { record },
    actors: {
      flushLog,
      validateCall: fromPromise<Validation, ToolCallContext>(async ({ input }) => {
        const v = validateCall(byName, input.name, input.arguments);
        return v.ok ? { ok: true, readOnly: v.tool.readOnly, idempotent: v.tool.idempotent, args: v.args } : { ok: false, code: v.code, message: v.message };
      }),
      decideCall: fromPromise(async ({ input }) => decideByPolicy(policy, input)),
      askApproval: fromPromise(async ({ input, signal }) => {
        if (!o.answerer) return { outcome: 'unavailable' as const, by: 'no answerer' };
        return o.answerer({ callId: input.callId, name: input.name, arguments: input.arguments, reason: input.reason ?? '', signal });
      }),
      executeTool: fromPromise(async ({ input, signal }) => {
        const tool = byName.get(input.name)!;
        const args = input.validation?.ok ? input.validation.args : {};
        return executeTool(tool, args, { workspace: o.cwd, bridleHome: o.bridleHome, signal, shell: o.shell });
      }),
    },
  });
  const step = stepMachine.provide({
    actions: { record },
    actors: {
      toolCall,
      prepareRequest: prepareRequestActor(recorder, () => ({ system, tools: specs, params: { model: o.modelName } })),
      streamModel: streamModelActor(o.model, o.onChunk),
      wait: fromPromise<void, { ms: number }>(({ input, signal }) => sleep(input.ms, signal)),
    },
  });
  const turn = turnMachine.provide({
    actions: { record },
    actors: {
      step,
      flushLog,
      runPreStep: fromPromise(async ({ input }) => (o.preStep ? o.preStep(input) : { kind: 'enter' as const, text: input.text })),
    },
  });
  const machine = sessionMachine.provide({ actors: { turn } });
  const priorTurns = recorder.entries.filter((e) => e.kind === 'turn/start').length;
  const actor = createActor(machine, { input: { maxSteps: o.maxSteps, retry: o.retry, turns: priorTurns }, inspect: o.inspect });

  let checkpointed = priorTurns;
  let waiters: ((t: TurnOutput | undefined) => void)[] = [];
  actor.subscribe({
    next: (snap) => {
      if (snap.value !== 'idle') return;
      const ctx = snap.context;
      if (ctx.turns > checkpointed) {
        checkpointed = ctx.turns;
        recorder.append({ kind: 'checkpoint', turn: `t${ctx.turns}`, snapshot: actor.getPersistedSnapshot() });
      }
      if (ctx.followups.length > 0) {
        actor.send({ type: 'session.wake.requested' });
        return;
      }
      const w = waiters;
      waiters = [];
      for (const f of w) f(ctx.last);
    },
    error: (err) => {
      const w = waiters;
      waiters = [];
      for (const f of w) f({ turn: '', reason: 'error', steps: 0, code: 'SESSION_CRASHED', cause: String(err), leftoverSteer: [], leftoverInject: [] });
    },
  });
  actor.start();

  const idle = () =>
    new Promise<TurnOutput | undefined>((resolve) => {
      const s = actor.getSnapshot();
      if (s.value === 'idle' && s.context.followups.length === 0) resolve(s.context.last);
      else waiters.push(resolve);
    });

  return {
    id: o.id,
    recorder,
    actor,
    send: (text, mode = 'followup') => actor.send({ type: 'session.input.received', text, mode }),
    cancel: (cause) => {
      actor.send({ type: 'session.cancel.requested', cause });
      return idle();
    },
    idle,
    run: async (text) => {
      actor.send({ type: 'session.input.received', text, mode: 'followup' });
      const out = await idle();
      return out!;
    },
    close: async () => {
      actor.stop();
      await recorder.flush();
      await o.store.close();
    },
  };
}
