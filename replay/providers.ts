/**
 * The seams of a replayed session, answered from the log: the model streams
 * recorded answers, a plugin hands back recorded decisions and tool outputs
 * (no tool runs), the answerer recorded approvals, the pre-step recorded
 * verdicts, the prompt registry the logged system prompt. Every answer waits
 * behind a gate until the log leads to its effect, so the input, cancels and
 * compactions the log holds land where they landed live (ADR 0021). Whatever
 * the log shows no outcome for waits — a cancel or a crash came first.
 */
import type { Chunk } from '../log/chunks.js';
import { chunksOf } from '../log/chunks.js';
import { isSummaryInstruction } from '../log/context/summary-prompt.js';
import type { Entry } from '../log/entries.js';
import type { ToolSpec } from '../log/entry-values.js';
import { isBudgetQuestionOf, stepOf } from '../log/ids.js';
import type { PreStepDecision } from '../ports/hooks.js';
import type { ToolOutput } from '../ports/tools.js';
import type { Answerer } from '../ports/approval.js';
import type { Plugin } from '../plugins/host.js';
import type { ModelProvider } from '../ports/model.js';
import { DEFAULT_CORE } from '../runtime/prompt/builtin.js';
import { HOOKS } from '../ports/index.js';
import { coreSection, toolsSection, workspaceSection } from '../runtime/prompt/builtin.js';
import type { PromptVars } from '../ports/prompt.js';
import { PromptRegistry } from '../runtime/prompt/registry.js';
import type { PromptScope } from '../ports/prompt.js';
import type { Gates } from './gates.js';
import type { ModelAnswer, ReplayScript } from './script.js';
import { ToolResultCode } from '../log/codes.js';

/** Where the replayed log stands, for the model to know which answer is asked for. */
export interface Progress {
  /** The newest step started, and its failed attempts so far. */
  step?: string;
  retries: number;
  /** 0-based index of the newest `compaction/start`. */
  compaction: number;
}

const never = <T>() => new Promise<T>(() => {});
const aborted = (signal: AbortSignal) => new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));

function summaryAnswer(script: ReplayScript, at: number): ModelAnswer | undefined {
  const s = script.summaries.get(at) ?? 'hang';
  if (s === 'hang') return undefined;
  if (!s.ok) return { kind: 'stream', blocks: [], finish: { kind: 'error', code: 'UNKNOWN', message: 'replay: the recorded summary request failed' } };
  return { kind: 'stream', blocks: [{ type: 'text', text: s.text }], finish: { kind: 'ok', reason: 'stop' } };
}

/** What a whole answer leads to: the step's message or retry, or the compaction's summary or end. */
const answerLeadsTo = (summary: boolean, step: string | undefined) => (e: Entry) =>
  summary ? e.kind === 'compaction/summary' || e.kind === 'compaction/end' : (e.kind === 'assistant/message' || e.kind === 'model/retry') && e.step === step;

/**
 * Contract: keeps the model seam's promises; a whole answer streams once the log leads to what it writes; an
 * interrupted one streams what was logged at once and waits for the cancel; an answer the log does not hold waits
 * for the abort (the cancel that came first).
 */
export function replayModel(script: ReplayScript, progress: () => Progress, gates: Gates): ModelProvider {
  async function* stream(request: Parameters<ModelProvider['stream']>[0], signal: AbortSignal): AsyncGenerator<Chunk> {
    const p = progress();
    const summary = isSummaryInstruction(request.messages.at(-1));
    const answer = summary ? summaryAnswer(script, p.compaction) : p.step !== undefined ? script.steps.get(p.step)?.[p.retries] : undefined;
    // Input that arrived while the request was out lands before the answer does.
    if (answer?.kind === 'stream') await Promise.race([gates.wait({ leadsTo: answerLeadsTo(summary, p.step) }, () => undefined), aborted(signal)]);
    if (answer) {
      const finish = answer.kind === 'stream' ? answer.finish : { kind: 'aborted' as const };
      const chunks = chunksOf(answer.blocks, finish, answer.usage, answer.firstChunkMs);
      // An interrupted answer streams what was logged, then waits for the cancel that cut it.
      if (answer.kind === 'interrupted') chunks.pop();
      for (const c of chunks) {
        if (signal.aborted) break;
        yield c;
      }
      if (answer.kind === 'stream') return;
    }
    // The append a failed turn could not make has no recorded answer: any answer makes the step try it, and the driver fails it again.
    if (!answer && p.step !== undefined && script.faulted.has(p.step)) {
      await Promise.race([gates.wait({ leadsTo: (e) => e.kind === 'repair' && e.found === 'turn-fault' }, () => undefined), aborted(signal)]);
      if (!signal.aborted) return yield { type: 'finish', finish: { kind: 'ok', reason: 'stop' } };
    }
    await aborted(signal);
    yield { type: 'finish', finish: { kind: 'aborted' } };
  }
  return { id: 'replay', stream };
}

const resultOf = (callId: string) => (e: Entry) => e.kind === 'tool/result' && e.callId === callId;

/** Recorded decisions before execution, recorded outputs instead of it: a replayed call never reaches a tool. */
export function replayPlugin(script: ReplayScript, gates: Gates): Plugin {
  return {
    name: 'replay',
    inject: [HOOKS],
    apply(ctx) {
      ctx.hooks.on('tool/pre-execute', ({ call }) => {
        // In a step a failed append ended, what the log lacks is let through, so the machines reach that append again.
        const d = script.calls.get(call.callId)?.decision ?? (script.faulted.has(call.step) ? ({ kind: 'allow' } as const) : undefined);
        if (!d) return never();
        const id = call.callId;
        // An ask the log answered before a restart is not asked again by the process that went on (ADR 0031): it leads
        // to the call's dispatch (an allow) or its denied result, not to a second question.
        const answered = script.calls.get(id)?.answer !== undefined;
        if (d.kind === 'ask') return gates.wait({ leadsTo: (e) => (e.kind === 'approval/asked' || (answered && (e.kind === 'tool/dispatch' || e.kind === 'tool/result'))) && e.callId === id }, () => d);
        if (d.kind === 'deny') return gates.wait({ leadsTo: resultOf(id) }, () => d);
        // An allow writes nothing until the step releases the call: silent, or named by its dispatch.
        return gates.wait({ leadsTo: (e) => e.kind === 'tool/dispatch' && e.callId === id, silent: true }, () => d);
      });
      ctx.hooks.on('tool/execute', ({ call, ctx }) => {
        const out = script.calls.get(call.callId)?.output;
        if (!out && script.faulted.has(call.step)) return gates.wait({ silent: true }, (): ToolOutput => ({ status: 'error', code: 'REPLAY_FAULT', content: 'replay: the result the log lacks' }));
        if (!out) return aborted(ctx.signal).then((): ToolOutput => ({ status: 'error', code: ToolResultCode.ABORTED, content: 'replay: cancelled' }));
        // A result the store refused: handing it back leads to the failed append (the driver fails it again), not to a result.
        if (script.calls.get(call.callId)?.kept) return gates.wait({ leadsTo: (e) => e.kind === 'repair' && e.found === 'turn-fault' }, () => ({ ...out }));
        return gates.wait({ leadsTo: resultOf(call.callId) }, () => ({ ...out }));
      });
    },
  };
}

export function replayAnswerer(script: ReplayScript, gates: Gates): Answerer {
  return (req) => {
    const a = script.calls.get(req.callId)?.answer;
    if (!a && script.faulted.has(stepOf(req.callId))) return gates.wait({ silent: true }, () => ({ outcome: 'allowed-once' as const, by: 'replay' }));
    if (!a) return never();
    const leadsTo = (e: Entry) => (e.kind === 'approval/decided' && e.callId === req.callId) || (req.name === 'budget' && e.kind === 'budget/decided' && isBudgetQuestionOf(req.callId, e.turn));
    return gates.wait({ leadsTo }, () => ({ ...a }));
  };
}

/**
 * The recorded verdict, once the log leads to what it writes (the turn's input, or its end); a `PRE_STEP_FAILED`
 * cause is rethrown so that `String(error)` gives it back byte for byte.
 */
export function replayPreStep(script: ReplayScript, gates: Gates) {
  return async ({ turn }: { turn: string; text: string }): Promise<PreStepDecision> => {
    const p = script.turns.get(turn)?.preStep;
    if (!p) return never();
    const leadsTo = (e: Entry) => (e.kind === 'user/message' || e.kind === 'turn/end') && e.turn === turn;
    return gates.wait({ leadsTo }, (): PreStepDecision => {
      if (p.kind === 'enter') return { kind: 'enter', text: p.text };
      if (p.kind === 'reject') return { kind: 'reject', reason: p.reason };
      throw { toString: () => p.cause };
    });
  };
}

/**
 * A registry whose prompt is the logged one; the driver shows it the header
 * each turn and step used. Before any header is logged (no request yet) it
 * assembles the built-in sections, as a session does by default — without
 * AGENTS.md files, which replay does not read.
 */
export class ReplayPrompt extends PromptRegistry {
  constructor(
    private system: string | undefined,
    tools: readonly ToolSpec[],
  ) {
    super();
    this.add(coreSection(DEFAULT_CORE));
    this.add(toolsSection(tools));
    this.add(workspaceSection(() => []));
  }

  show(system: string | undefined): void {
    if (system === undefined || system === this.system) return;
    this.system = system;
    this.version++;
  }

  override assemble(scope: PromptScope, vars: PromptVars): string {
    return this.system ?? super.assemble(scope, vars);
  }
}
