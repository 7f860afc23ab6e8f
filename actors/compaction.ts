/**
 * The compaction machine's effects, over a session's recorder, meter and
 * model: measuring and the two planners (pure functions of the projection,
 * as actions) and the one model request that writes a summary (an actor).
 */
import { escapedBytes, MAX_ANSWER_BYTES } from '../log/entry-size.js';
import { fromPromise } from 'xstate';
import { assembleBlocks, emptyAssembly } from '../log/chunks.js';
import { planPrune, pruneLimitsFor } from '../log/context/prune.js';
import { planSummary } from '../log/context/summary-plan.js';
import { tokensOfChars } from '../log/context/tokens.js';
import { unitsOf } from '../log/context/units.js';
import type { DraftOf, Entry } from '../log/entries.js';
import type { ModelRequest } from '../log/messages.js';
import type { Recorder } from '../log/recorder.js';
import type { CompactionTrigger, ContextMeasure, SummaryRequestPlan } from '../machines/compaction-drafts.js';
import type { SummaryAnswer } from '../machines/compaction.machine.js';
import { isPressing } from '../machines/compaction-drafts.js';
import type { ContextMeter } from '../runtime/context/meter.js';
import type { ModelProvider } from '../ports/model.js';
import type { HeaderParts } from '../runtime/prepare-request.js';
import { ModelCode } from '../log/entry-values.js';

export interface CompactionSettings {
  /** The recent tail kept verbatim, as a share of the window (default 0.25). */
  tailRatio?: number;
  /** Room for the summary (default: a tenth of the window, 256 to 4096 tokens). */
  summaryMaxTokens?: number;
}

export const summaryBudget = (window: number, s: CompactionSettings = {}): number =>
  s.summaryMaxTokens ?? Math.min(4096, Math.max(256, Math.floor(window * 0.1)));

function lastTurn(entries: readonly Entry[]): string {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.kind === 'turn/start') return e.turn;
  }
  return 't0';
}

/**
 * Streams `request` to `model` and returns the text of the answer.
 * Contract: never rejects; failures (including an answer with no text) are data.
 */
export async function requestText(model: ModelProvider, request: ModelRequest, signal: AbortSignal): Promise<SummaryAnswer> {
  let a = emptyAssembly();
  let bytes = 0;
  try {
    for await (const chunk of model.stream(request, signal)) {
      // A summary is logged whole (`compaction/summary`): one past what an answer may hold fails, as an answer is cut.
      if (chunk.type === 'text-delta' || chunk.type === 'reasoning-delta') bytes += escapedBytes(chunk.text);
      if (bytes > MAX_ANSWER_BYTES) return { ok: false, code: ModelCode.OUTPUT_TOO_LARGE, message: `the summary passed ${MAX_ANSWER_BYTES} bytes, the most one log entry may hold` };
      a = assembleBlocks(a, chunk);
      if (chunk.type === 'finish') break;
    }
  } catch (err) {
    return { ok: false, code: ModelCode.UNKNOWN, message: `${model.id} threw across the stream: ${String(err)}` };
  }
  const f = a.finish;
  if (!f) return { ok: false, code: ModelCode.TRANSPORT, message: 'the summary stream ended without a finish' };
  if (f.kind === 'aborted') return { ok: false, code: 'ABORTED', message: 'the summary request was aborted' };
  if (f.kind === 'error') return { ok: false, code: f.code, message: f.message };
  const text = a.blocks.flatMap((b) => (b?.type === 'text' ? [b.text] : [])).join('');
  return text.trim() ? { ok: true, text: text.trim() } : { ok: false, code: ModelCode.EMPTY_RESPONSE, message: 'the summary answer held no text' };
}

/**
 * The turn's pressure guard: the same measurement, synchronous, so no actor per step (ADR 0007).
 * Contract: never throws; a measurement that fails is not over threshold (the request goes out; an overflow compacts).
 */
export function pressureGuard(meter: ContextMeter): () => boolean {
  return () => {
    try {
      return isPressing(meter.measure());
    } catch {
      return false;
    }
  };
}

/** What the compaction machine is answered with (its `CompactionEvent`s). */
type Answer = { type: string } & Record<string, unknown>;
type Self = { self: { send(event: never): void } };

/**
 * The compaction machine's effects over a session's recorder, meter and model. Measuring and the two planners
 * are synchronous, so they are actions that answer the machine at once (ADR 0018, ADR 0021); the summary
 * request is the one actor. Contract: the actions never throw; a failure is answered as one.
 */
export function compactionActors(d: { recorder: Recorder; meter: ContextMeter; header: () => HeaderParts; model: ModelProvider; settings?: CompactionSettings }) {
  const { recorder, meter } = d;
  const answer = ({ self }: Self, ok: () => Answer, failed: string) => {
    let a: Answer;
    try {
      a = ok();
    } catch (err) {
      a = { type: failed, error: String(err) };
    }
    (self.send as (e: Answer) => void)(a);
  };
  const plan = (input: { trigger: CompactionTrigger; turn?: string }): SummaryRequestPlan | null => {
    // The previous request's header, so the summary request extends it byte for byte.
    const last = meter.lastHeader;
    const h: HeaderParts = last ? { system: last.system, tools: last.tools, params: last.params } : d.header();
    const window = meter.window;
    const summaryMaxTokens = summaryBudget(window, d.settings);
    const units = unitsOf(recorder.projection.visible);
    // Asked for outright (manual) or told by an overflow (reactive): keep at most a quarter of the conversation as the tail.
    const tail = Math.floor(window * (d.settings?.tailRatio ?? 0.25));
    const tailTokens = input.trigger === 'proactive' ? tail : Math.min(tail, Math.floor(tokensOfChars(units.reduce((n, u) => n + u.chars, 0)) * 0.25));
    const plan = planSummary({
      units,
      header: h,
      window,
      ...(input.turn !== undefined ? { currentTurn: input.turn } : {}),
      tailTokens,
      summaryMaxTokens,
    });
    if (!plan) return null;
    const request: ModelRequest = {
      model: h.params.model,
      system: h.system,
      tools: h.tools,
      messages: [...recorder.projection.messages.slice(0, plan.prefix), plan.instruction],
      maxTokens: summaryMaxTokens,
    };
    if (h.params.temperature !== undefined) request.temperature = h.params.temperature;
    // The summary request shares the session's prefix (system, tools, the messages it summarizes): the same cache key lets it hit the same cache.
    const first = recorder.entries[0];
    if (first?.kind === 'session/start') request.cacheKey = first.id;
    return { start: plan.start, end: plan.end, turn: input.turn ?? lastTurn(recorder.entries), request, replacing: plan.replacing };
  };
  return {
    actions: {
      measure: (a: Self) => answer(a, () => ({ type: 'compaction.measured', measure: meter.measure() }), 'compaction.measure.failed'),
      planPrune: (a: Self) =>
        answer(a, () => ({ type: 'compaction.pruned', drafts: planPrune(unitsOf(recorder.projection.visible), pruneLimitsFor(meter.window)) }), 'compaction.prune.failed'),
      planSummary: (a: Self, input: { trigger: CompactionTrigger; turn?: string }) => answer(a, () => ({ type: 'compaction.planned', plan: plan(input) }), 'compaction.plan.failed'),
    },
    actors: {
      requestSummary: fromPromise<SummaryAnswer, SummaryRequestPlan>(async ({ input, signal }) => requestText(d.model, input.request, signal)),
    },
  };
}
