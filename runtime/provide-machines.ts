/**
 * The session machine with every seam provided: the model and its recovery policies, the tools and their
 * pipeline (decide, ask, execute), the log's record and flush, compaction, the pre-step hook. Nothing here
 * runs: `wireSession` (wiring.ts) starts the actor and does the host's duties around it.
 */
import { fromPromise } from 'xstate';
import type { ApprovalRule } from '../log/entries-calls.js';
import type { ToolSpec } from '../log/entry-values.js';
import type { Recorder } from '../log/recorder.js';
import type { Clock } from '../log/clock.js';
import { compactionMachine } from '../machines/compaction.machine.js';
import { sessionMachine } from '../machines/session.machine.js';
import { stepMachine } from '../machines/step.machine.js';
import { toolCallMachine, type ToolCallContext } from '../machines/tool-call.machine.js';
import { turnMachine } from '../machines/turn.machine.js';
import { renderForRules } from '../plugins/hooks/canonical.js';
import { createToolPipeline, type HookProblem } from '../plugins/hooks/pipeline.js';
import type { CallFacts, Recovery, RequestErrorPayload } from '../ports/hooks.js';
import type { ToolDefinition, ToolProgress } from '../ports/tools.js';
import { decideByPolicy } from '../safety/approval.js';
import type { SessionConfinement } from '../safety/never.js';
import type { SandboxService } from '../ports/sandbox.js';
import { exactRule, rulesFromLog } from '../safety/approval-rules.js';
import { toolSpec } from '../tools/index.js';
import { askApproval } from '../actors/ask-approval.js';
import { budgetQuestion } from '../actors/budget-question.js';
import { toolQuestions } from '../actors/tool-question.js';
import { executeTool } from '../actors/execute-tool.js';
import { createContextEngine } from './context/engine.js';
import { prepareRequestAction } from './prepare-request.js';
import { closeFaultedTurn } from './session-fault.js';
import { streamModelActor } from '../actors/stream-model.js';
import { validateCallAction } from './validate-call.js';
import type { Answerer, ApprovalService } from '../ports/approval.js';
import type { FileSystem } from '../ports/fs.js';
import type { ContextSettings } from '../ports/loop.js';
import type { ModelProvider } from '../ports/model.js';
import type { Subprocess } from '../ports/subprocess.js';
import type { ToolRegistry } from '../ports/tool-registry.js';
import type { HookRegistry } from '../plugins/hooks/registry.js';
import type { PreStepDecision } from '../ports/hooks.js';
import type { PromptRegistry } from './prompt/registry.js';
import type { DeltaSink } from '../actors/stream-model.js';

const isRecovery = (v: unknown): v is Recovery => {
  const r = v as Recovery | null | undefined;
  return r?.kind === 'compact' || r?.kind === 'give-up' || (r?.kind === 'retry' && typeof r.delayMs === 'number' && Number.isFinite(r.delayMs) && r.delayMs >= 0);
};

/** What `never` reads of the sandbox service, read at each decision (a child's is a snapshot taken at its start). */
const confinementOf = (s: SandboxService | undefined): SessionConfinement | undefined =>
  s && { confines: s.provider.confines, mode: s.policy.mode, network: s.policy.network, ...(s.policy.protectGit !== undefined ? { protectGit: s.policy.protectGit } : {}) };

const defaultSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/** A session's services, resolved from its rows (`SessionParts`, wiring.ts), that the machines are provided from. */
export interface SessionServices {
  model: ModelProvider;
  tools: ToolRegistry;
  /** The tools' world: files through `fs`, commands through `subprocess`, nothing else. */
  fs: FileSystem;
  subprocess: Subprocess;
  hooks: HookRegistry;
  prompt: PromptRegistry;
  approval: ApprovalService;
  /** The session's sandbox, as `never` decides by it (ADR 0052); none: `never` runs nothing that writes. */
  sandbox?: SandboxService;
  context: ContextSettings;
}

/** What the machines are provided from: the part of a session's wiring (`Wiring`, wiring.ts) they use. */
export interface MachineSeams extends SessionServices {
  id: string;
  cwd: string;
  depth?: number;
  modelName: string;
  answerer?: Answerer;
  /** A spent budget asks the answerer whether to go on (chat, serve, acp); else the turn ends `BUDGET_EXHAUSTED` (ADR 0047). */
  askOnBudget?: boolean;
  system?: string;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  onChunk?: DeltaSink;
  /** A running call's progress report (an MCP server's `notifications/progress`): for display, never logged (ADR 0065). */
  onProgress?: (call: { callId: string; name: string }, report: ToolProgress) => void;
  maxAnswerBytes?: number;
  /** The session's clock: the time to a response's first chunk is measured on it (ADR 0079). */
  clock?: Clock;
  preStep?: (input: { turn: string; text: string }) => Promise<PreStepDecision>;
}

/** Each machine as bridle provided it, changed before the machine above it invokes it (none given: as provided). */
export interface LoopRefinements {
  session?: (m: typeof sessionMachine) => typeof sessionMachine;
  turn?: (m: typeof turnMachine) => typeof turnMachine;
  step?: (m: typeof stepMachine) => typeof stepMachine;
  toolCall?: (m: typeof toolCallMachine) => typeof toolCallMachine;
  compaction?: (m: typeof compactionMachine) => typeof compactionMachine;
}

export interface ProvidedMachines {
  /** The session machine, every actor, action and guard of its tree provided. */
  machine: ReturnType<typeof sessionMachine.provide>;
  /** The context engine the step reads its request from (the prompt, the meter, the pressure guard). */
  context: ReturnType<typeof createContextEngine>;
  /** Logs a hook listener's problem as `hook/report`. */
  reportHook: (p: HookProblem) => void;
}

/** The registry's tools by name and as specs, derived again only when it changes (a plugin mounted or unmounted a tool). */
function toolIndex(tools: ToolRegistry) {
  let derived: { version: number; byName: Map<string, ToolDefinition>; specs: ToolSpec[] } | undefined;
  const current = () => {
    if (derived?.version !== tools.version) {
      const list = tools.list();
      derived = { version: tools.version, byName: new Map(list.map((t) => [t.name, t])), specs: list.map(toolSpec) };
    }
    return derived;
  };
  return { current, byName: { get: (name: string) => current().byName.get(name) } };
}
type ToolIndex = ReturnType<typeof toolIndex>;

const argsOf = (c: ToolCallContext) => (c.validation?.ok ? c.validation.args : {});

/** What the approval policy and the hooks are told of a call, and how it is shown to whoever is asked. */
function callFacts(index: ToolIndex, cwd: string) {
  const { byName } = index;
  const facts = (c: ToolCallContext): CallFacts => {
    const tool = byName.get(c.name);
    const v = c.validation;
    const valid = v?.ok === true;
    const args = argsOf(c);
    // Built in the order of its keys, the optional ones set only when the tool has them (no empty object spread per call).
    const f: Omit<CallFacts, 'rendered'> & { rendered?: string } = {
      turn: c.turn,
      step: c.step,
      callId: c.callId,
      name: c.name,
      arguments: c.arguments,
      args,
      // What the tool says of itself: the validation's `readOnly` is the scheduler's (a delegation may overlap too).
      readOnly: valid && tool?.readOnly === true,
      idempotent: v?.ok === true && v.idempotent,
      delegates: valid && tool?.delegates === true,
    };
    if (tool?.writeReason !== undefined) f.writeReason = tool.writeReason;
    if (tool?.confinement !== undefined) f.confinement = tool.confinement;
    f.rendered = renderForRules(args, cwd);
    return f as CallFacts;
  };
  const present = (c: ToolCallContext): string => {
    try {
      return byName.get(c.name)!.present(argsOf(c));
    } catch {
      return `${c.name} ${c.arguments}`;
    }
  };
  return { facts, present };
}

/** Logs a hook listener's problem as `hook/report`, with the turn, step and call it was in when it has them. */
const hookReporter = (recorder: Recorder) => (p: HookProblem) => {
  const d: Parameters<Recorder['append']>[0] = { kind: 'hook/report', hook: p.hook, listener: p.listener, problem: p.problem };
  for (const k of ['turn', 'step', 'callId'] as const) if (p[k] !== undefined) d[k] = p[k];
  recorder.append(d);
};

/** What every machine's provision shares: the seams, the log, the registry's tools and the hooks' pipeline. */
interface Provision {
  o: MachineSeams;
  recorder: Recorder;
  refine: LoopRefinements;
  record: (_: unknown, draft: Parameters<Recorder['append']>[0]) => void;
  flushLog: ReturnType<typeof fromPromise<void, void>>;
  reportHook: (p: HookProblem) => void;
  index: ToolIndex;
  /** The hooks around a call and before a step: one pipeline for the session. */
  pipeline: ReturnType<typeof createToolPipeline>;
}

const as = <M>(f: ((m: M) => M) | undefined, m: M): M => (f ? f(m) : m);
/** A question's answerer and timeout, each only when the seams have one. */
const askedOf = (o: MachineSeams) => ({ ...(o.answerer ? { answerer: o.answerer } : {}), ...(o.approval.answerTimeoutMs !== undefined ? { answerTimeoutMs: o.approval.answerTimeoutMs } : {}) });

/** The tool call: validated, decided by the policy and the hooks, asked, executed through the pipeline. */
function provideToolCall(p: Provision) {
  const { o, recorder, record, flushLog, index, pipeline } = p;
  const policy = o.approval.policy;
  const rules: ApprovalRule[] = [...o.approval.rules, ...rulesFromLog(recorder.entries)];
  const { facts, present } = callFacts(index, o.cwd);
  // A tool's questions during its call (an MCP server's input requests): an approval class of their own (ADR 0065).
  const askTool = toolQuestions(recorder, { policy, ...askedOf(o) });
  return as(p.refine.toolCall, toolCallMachine.provide({
    actions: { record, validateCall: validateCallAction(() => index.current().byName) },
    // A store durable on append (memory) has nothing to flush: the call skips its two flushLog actors (ADR 0007).
    guards: { isLogDurable: () => recorder.isDurable },
    actors: {
      flushLog,
      decideCall: fromPromise(async ({ input }) => {
        const call = facts(input);
        return pipeline.decide(call, decideByPolicy(policy, call, rules, confinementOf(o.sandbox)));
      }),
      askApproval: fromPromise(async ({ input, signal }) => {
        const call = facts(input);
        const request = { callId: call.callId, name: call.name, arguments: call.arguments, reason: input.reason ?? '', presented: present(input), always: exactRule(call.name, call.rendered) };
        const answer = await askApproval({ answerer: o.answerer, timeoutMs: o.approval.answerTimeoutMs }, request, signal);
        if (answer.outcome === 'allowed-always' && answer.rule) rules.push(answer.rule);
        return answer;
      }),
      executeTool: fromPromise(async ({ input, signal }) => {
        const tool = index.byName.get(input.name)!;
        const call = { turn: input.turn, step: input.step, callId: input.callId };
        const ask = (q: Parameters<typeof askTool>[1], own?: AbortSignal) => askTool(call, q, own ? AbortSignal.any([signal, own]) : signal);
        const progress = (r: ToolProgress) => o.onProgress?.({ callId: input.callId, name: input.name }, r);
        return pipeline.execute({ call: facts(input), tool, args: argsOf(input), ctx: { fs: o.fs, subprocess: o.subprocess, signal, callId: input.callId, ask, progress } });
      }),
    },
  }));
}

/** The step: its request prepared from the context, the model streamed, its calls run, a failed request recovered or given up. */
function provideStep(p: Provision, context: ReturnType<typeof createContextEngine>) {
  const { o, recorder, record, reportHook } = p;
  const sleep = o.sleep ?? defaultSleep;
  return as(p.refine.step, stepMachine.provide({
    actions: { record, prepareRequest: prepareRequestAction(recorder, context.header) },
    actors: {
      toolCall: provideToolCall(p),
      streamModel: streamModelActor(o.model, o.onChunk, o.hooks, reportHook, o.maxAnswerBytes, o.clock),
      wait: fromPromise<void, { ms: number }>(({ input, signal }) => sleep(input.ms, signal)),
      // The request-error waterfall (ADR 0020): the built-in retry and overflow policies are listeners (rows); none answering gives up.
      recoverRequest: fromPromise<Recovery, RequestErrorPayload>(({ input }) =>
        o.hooks.waterfall('request-error', input, async () => ({ kind: 'give-up' }), {
          accepts: isRecovery,
          onThrow: () => ({ kind: 'give-up' }),
          report: (listener, problem) => reportHook({ hook: 'request-error', listener, problem, turn: input.turn, step: input.step }),
        }),
      ),
    },
  }));
}

/** Contract: appends nothing and starts nothing; the returned machine writes through `recorder` once run. */
export function provideMachines(o: MachineSeams, recorder: Recorder, refine: LoopRefinements = {}): ProvidedMachines {
  const index = toolIndex(o.tools);
  const context = createContextEngine({ recorder, id: o.id, cwd: o.cwd, modelName: o.modelName, depth: o.depth ?? 0, prompt: o.prompt, tools: () => index.current().specs, model: o.model, context: o.context, ...(o.system !== undefined ? { system: o.system } : {}) });
  // A flush that fails rejects with LogNotDurableError: the machine waiting on it notes it in the log and ends the turn LOG_NOT_DURABLE (ADR 0017).
  const flushLog = fromPromise<void, void>(() => recorder.flush());
  const record = (_: unknown, draft: Parameters<Recorder['append']>[0]) => void recorder.append(draft);
  const reportHook = hookReporter(recorder);
  const pipeline = createToolPipeline(o.hooks, reportHook, executeTool);
  const p: Provision = { o, recorder, refine, record, flushLog, reportHook, index, pipeline };
  const compaction = as(refine.compaction, compactionMachine.provide({ actions: { record, ...context.actors.actions }, actors: { ...context.actors.actors, flushLog } }));
  const step = provideStep(p, context);
  const budget = budgetQuestion(recorder, { policy: o.approval.policy, ask: o.askOnBudget === true, ...askedOf(o) });
  const turn = as(refine.turn, turnMachine.provide({
    actions: { record },
    guards: { isOverThreshold: context.isOverThreshold, isOverBudget: budget.isOverBudget },
    actors: {
      step,
      askBudget: budget.askBudget,
      flushLog,
      compaction,
      runPreStep: fromPromise(async ({ input }) =>
        pipeline.preStep(input, async (q) => (o.preStep ? o.preStep(q) : { kind: 'enter' as const, text: q.text })),
      ),
    },
  }));
  const machine = as(refine.session, sessionMachine.provide({
    actors: { turn, compaction, closeFaultedTurn: fromPromise(({ input }) => closeFaultedTurn(recorder, input.turn, input.error, new Set(input.held))) },
  }));
  return { machine, context, reportHook };
}
