/**
 * One step: one model request (retried under the request-error policy) and
 * the tool calls its answer caused, each a spawned tool-call actor.
 */
import { assign, enqueueActions, fromCallback, setup, type CallbackActorLogic } from 'xstate';
import { assembleBlocks, emptyAssembly, type Assembly, type Chunk } from '../log/chunks.js';
import { TurnEndCode } from '../log/codes.js';
import type { Block, Finish, ModelErrorCode, ToolCallBlock } from '../log/entry-values.js';
import type { Draft } from '../log/entries.js';
import { nthCall } from '../log/ids.js';
import type { ModelRequest } from '../log/messages.js';
import { draftAssistant, draftRetry, draftStepEnd, draftStepStart, draftToolCall, type StepRef } from './drafts.js';
import { notProvided, recordAction } from './not-provided.js';
import type { Recovery, RequestErrorPayload } from '../ports/hooks.js';
import type { ApprovalAnswer } from '../ports/approval.js';
import { releasable, type CallSlot } from './schedule-calls.js';
import { toolCallMachine } from './tool-call.machine.js';

/**
 * A step a process left waiting on an approval, gone on with after a restart (ADR 0027): its answer as logged,
 * and the calls of it that already have their result. The step/start, the answer and the tool/call entries are
 * in the log already; the calls without a result are decided again (the pending question asked again).
 */
export interface StepResume {
  blocks: Block[];
  finish: Finish;
  settled: string[];
  /** Calls asked and answered, not dispatched, by call id: the logged answer is used, not asked for again (ADR 0031). */
  answered?: Record<string, ApprovalAnswer>;
}

export interface StepInput {
  turn: string;
  step: string;
  resume?: StepResume;
  /** The turn already compacted once for an overflow: the request-error listeners see it, so they do not loop. */
  overflowRetried?: boolean;
}

export type StepReason = 'tool-calls' | 'stop' | 'length' | 'error' | 'aborted';

export interface StepOutput {
  reason: StepReason;
  /** The model's own finish reason when it answered. */
  finish?: Finish;
  code?: ModelErrorCode | string;
  /** What went wrong, when the code alone does not say (a save that failed: the store's error). */
  cause?: string;
  /** The request-error listeners asked the turn to compact the context and try the request again. */
  recovery?: 'compact';
}

export interface StepContext {
  turn: string;
  step: string;
  overflowRetried: boolean;
  /** The request-error listeners' answer for the failure at hand. */
  recovery?: Recovery;
  request?: ModelRequest;
  assembly: Assembly;
  /** Failed attempts of the current request. */
  failures: number;
  calls: CallSlot[];
  cancelled: boolean;
  /** A call's dispatch or result could not be saved: the first such failure. */
  unsaved?: string;
  output?: StepOutput;
  /** Gone on with after a restart: the calls that have their result already (ADR 0027). */
  resumed?: string[];
  /** Gone on with after a restart: the calls the log holds an answer for (ADR 0031). */
  answered?: Record<string, ApprovalAnswer>;
}

export type StepEvent =
  /** The host's answer to the `prepareRequest` action, sent before any other event reaches the step. */
  | { type: 'step.request.prepared'; request: ModelRequest }
  | { type: 'step.request.failed'; error: string }
  /** `first`: the timed `first-chunk` that came before `chunk`, folded into its event (ADR 0110). */
  | { type: 'model.chunk.received'; chunk: Chunk; first?: Extract<Chunk, { type: 'first-chunk' }> }
  | { type: 'tool.call.ready'; callId: string; readOnly: boolean }
  /** A tool-call actor reached its final state, its tool/result durable. */
  | { type: `xstate.done.actor.${string}`; output: { callId: string; unsaved?: string } }
  | { type: 'step.cancel.requested' };

const toolCalls = (a: Assembly): ToolCallBlock[] => a.blocks.filter((b): b is ToolCallBlock => b?.type === 'tool-call');
/** What survives an interruption or an error: never a half-streamed tool call, which would owe a result. */
const withoutCalls = (a: Assembly): Block[] => a.blocks.filter((b): b is Block => b !== undefined && b.type !== 'tool-call');
const delayOf = (c: StepContext): number => (c.recovery?.kind === 'retry' ? c.recovery.delayMs : 0);
const finishOf = (c: StepContext): Finish => c.assembly.finish ?? { kind: 'error', code: 'TRANSPORT', message: 'stream ended without finish' };
const finishChunkOf = (e: StepEvent): Finish | undefined => (e.type === 'model.chunk.received' && e.chunk.type === 'finish' ? e.chunk.finish : undefined);
const doneCallId = (e: StepEvent): string | undefined => (e as { output?: { callId?: string } }).output?.callId;
/** The answer as the step ended with it: `length` when the model was cut off, else `stop` (no calls) or `tool-calls`. */
const answerOutput = (c: StepContext, reason: 'stop' | 'tool-calls'): StepOutput => {
  const f = finishOf(c);
  return { reason: f.kind === 'ok' && f.reason === 'length' ? 'length' : reason, finish: f };
};
const callRef = (c: StepContext, b: ToolCallBlock, i: number) => ({
  turn: c.turn,
  step: c.step,
  callId: nthCall(c.step, i + 1),
  toolCallId: b.id,
  name: b.name,
});

/**
 * The answer as streamed, calls and all, logged as the finish arrives: `record` with the draft as its params (read
 * after the transition's `assemble`), so no `enqueueActions` is resolved for it (ADR 0109).
 */
const recordAnswer = { type: 'record', params: ({ context }: { context: StepContext }) => draftAssistant(context, context.assembly.blocks, finishOf(context), context.assembly) } as const;
/** The calls with the one whose done event this is settled. */
const settled = (c: StepContext, e: StepEvent): CallSlot[] => c.calls.map((s) => (s.callId === doneCallId(e) ? { ...s, phase: 'settled' as const } : s));
/** The first call that could not be saved: kept once set. */
const unsavedAfter = (c: StepContext, e: StepEvent): string | undefined => c.unsaved ?? (e as { output?: { unsaved?: string } }).output?.unsaved;
/**
 * The calls that may start now released in `calls` (`running`), and their ids. After a cancel every unsettled call
 * has been told to stop: releasing one then would reach a call already done, so none is.
 */
const release = (c: StepContext, calls: CallSlot[]): { calls: CallSlot[]; ids: string[] } => {
  const ids = c.cancelled ? [] : releasable(calls);
  return ids.length === 0 ? { calls, ids } : { calls: calls.map((s) => (ids.includes(s.callId) ? { ...s, phase: 'running' as const } : s)), ids };
};
/** The step's output once its last call settled. */
const callingOutput = (c: StepContext, unsaved: string | undefined): StepOutput => {
  if (c.cancelled) return { reason: 'aborted' };
  // A result or dispatch that could not be saved stops the turn here: the model is not told what the log does not hold (ADR 0017).
  // A cancel that came first still wins: the turn ends aborted, and its end's own flush says whether the log was saved.
  if (unsaved !== undefined) return { reason: 'error', code: TurnEndCode.LOG_NOT_DURABLE, cause: unsaved };
  return answerOutput(c, 'tool-calls');
};

export const stepMachine = setup({
  types: {
    context: {} as StepContext,
    input: {} as StepInput,
    events: {} as StepEvent,
    output: {} as StepOutput,
  },
  actors: {
    streamModel: fromCallback(() => {
      throw new Error('streamModel: not provided');
    }) as CallbackActorLogic<StepEvent, { request: ModelRequest; step: string; attempt: number }>,
    wait: notProvided<void, { ms: number }>('wait'),
    /** The `request-error` waterfall: retry after a delay, compact and retry, or give up. */
    recoverRequest: notProvided<Recovery, RequestErrorPayload>('recoverRequest'),
    toolCall: toolCallMachine,
  },
  actions: {
    record: (_, _draft: Draft) => {
      throw new Error('record: not provided');
    },
    /**
     * Synchronous, so it is an action, not an actor (ADR 0007): the host builds the request from the log, records
     * the header if it changed, and answers with `step.request.prepared` (or `step.request.failed`) to this step.
     */
    prepareRequest: (_, _ref: StepRef) => {
      throw new Error('prepareRequest: not provided');
    },
    assemble: assign({
      assembly: ({ context, event }) => {
        if (event.type !== 'model.chunk.received') return context.assembly;
        return assembleBlocks(event.first ? assembleBlocks(context.assembly, event.first) : context.assembly, event.chunk);
      },
    }),
    /**
     * Each call logged (unless the step is resumed) and spawned, and the step's slots for them, in one assign: the
     * spawns ride the assign that sets `calls`, so entering `calling` copies the step's snapshot once, not once per
     * call and once for the slots (ADR 0109). The spawned calls start after the entry's actions, as before.
     */
    spawnCalls: enqueueActions(({ context, enqueue }) => {
      const blocks = toolCalls(context.assembly);
      if (!context.resumed) blocks.forEach((b, i) => enqueue(recordAction(draftToolCall(callRef(context, b, i), b.arguments))));
      enqueue.assign(({ spawn }) => ({
        calls: blocks.map((b, i): CallSlot => {
          const ref = callRef(context, b, i);
          // A resumed step's calls are logged already; those with a result are done.
          if (context.resumed?.includes(ref.callId)) return { callId: ref.callId, phase: 'settled', readOnly: false };
          const answered = context.answered?.[ref.callId];
          spawn('toolCall', { id: ref.callId, input: { ...ref, arguments: b.arguments, ...(answered ? { answered } : {}) } });
          return { callId: ref.callId, phase: 'pending', readOnly: false };
        }),
      }));
    }),
    /**
     * The ready call marked so, and the calls it lets start released, in one assign: one copy of the step's snapshot
     * for the event, not one for the mark and one for the release (ADR 0109).
     */
    readyCall: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'tool.call.ready') return;
      const marked = context.calls.map((s) => (s.callId === event.callId ? { ...s, phase: 'ready' as const, readOnly: event.readOnly } : s));
      const { calls, ids } = release(context, marked);
      enqueue.assign({ calls });
      for (const id of ids) enqueue.sendTo(id, { type: 'tool.call.released' });
    }),
    /** A call settled that was not the last: marked, and the calls it held back released, in one assign (ADR 0109). */
    settleCall: enqueueActions(({ context, event, enqueue }) => {
      const { calls, ids } = release(context, settled(context, event));
      enqueue.assign({ calls, unsaved: unsavedAfter(context, event) });
      for (const id of ids) enqueue.sendTo(id, { type: 'tool.call.released' });
    }),
    /** The last call settled: marked, and the step's output decided from it, in one assign (ADR 0091, 0109). */
    endCalling: assign(({ context, event }) => {
      const unsaved = unsavedAfter(context, event);
      return { calls: settled(context, event), unsaved, output: callingOutput(context, unsaved) };
    }),
    cancelCalls: enqueueActions(({ context, enqueue }) => {
      for (const s of context.calls) if (s.phase !== 'settled') enqueue.sendTo(s.callId, { type: 'tool.cancel.requested' });
    }),
  },
  guards: {
    isFinishChunk: ({ event }) => event.type === 'model.chunk.received' && event.chunk.type === 'finish',
    isRetry: ({ context }) => context.recovery?.kind === 'retry',
    isCompact: ({ context }) => context.recovery?.kind === 'compact',
    // The finish is decided in the transition that brings it (ADR 0091): guards run before the transition's
    // `assemble`, so they read the finish off the chunk; the blocks are complete already (a finish only drops holes).
    isAbortedFinish: ({ context, event }) => finishChunkOf(event)?.kind === 'aborted' || (finishChunkOf(event) !== undefined && context.cancelled),
    isFailedFinish: ({ event }) => finishChunkOf(event) !== undefined && finishChunkOf(event)!.kind !== 'ok',
    isFinishWithCalls: ({ context, event }) => finishChunkOf(event)?.kind === 'ok' && toolCalls(context.assembly).length > 0,
    /** The call whose done event this is was the last one unsettled: the step ends in this transition (ADR 0091). */
    isLastToSettle: ({ context, event }) => context.calls.every((s) => s.phase === 'settled' || s.callId === doneCallId(event)),
    hasPartialText: ({ context }) => withoutCalls(context.assembly).some((b) => b.type === 'text' && b.text.length > 0),
    isResumed: ({ context }) => context.resumed !== undefined,
  },
}).createMachine({
  id: 'step',
  context: ({ input }) => ({
    turn: input.turn,
    step: input.step,
    overflowRetried: input.overflowRetried ?? false,
    assembly: input.resume ? { ...emptyAssembly(), blocks: input.resume.blocks, finish: input.resume.finish } : emptyAssembly(),
    failures: 0,
    calls: [],
    cancelled: false,
    ...(input.resume ? { resumed: input.resume.settled } : {}),
    ...(input.resume?.answered ? { answered: input.resume.answered } : {}),
  }),
  initial: 'opening',
  output: ({ context }) => context.output ?? { reason: 'error', code: 'UNKNOWN' },
  states: {
    opening: {
      description: 'A step gone on with after a restart (its answer logged, a call waiting on an approval) goes straight to its calls (ADR 0027).',
      always: [{ guard: 'isResumed', target: 'calling' }, { target: 'preparing' }],
    },
    preparing: {
      description: 'Builds the request from the log alone (I1), right after step/start, and records the request header when it changed.',
      entry: [
        { type: 'record', params: ({ context }) => draftStepStart(context) },
        { type: 'prepareRequest', params: ({ context }) => ({ turn: context.turn, step: context.step }) },
      ],
      on: {
        'step.request.prepared': { target: 'streaming', actions: assign({ request: ({ event }) => event.request }) },
        'step.request.failed': {
          target: 'ending',
          actions: assign({ output: ({ event }) => ({ reason: 'error' as const, code: TurnEndCode.REQUEST_BUILD_FAILED, finish: { kind: 'error' as const, code: 'UNKNOWN' as const, message: event.error } }) }),
        },
        'step.cancel.requested': { target: 'ending', actions: assign({ cancelled: true, output: { reason: 'aborted' } }) },
      },
    },
    streaming: {
      description: 'Chunks are folded by assembleBlocks as they arrive; the stream always ends in one finish (I8).',
      invoke: {
        src: 'streamModel',
        input: ({ context }) => ({ request: context.request!, step: context.step, attempt: context.failures + 1 }),
      },
      on: {
        // The finish decides where the step goes, in the transition that brings it (ADR 0091): no transient state after it.
        'model.chunk.received': [
          { guard: 'isAbortedFinish', target: 'interrupted', actions: 'assemble' },
          { guard: 'isFailedFinish', target: 'recovering', actions: 'assemble' },
          { guard: 'isFinishWithCalls', target: 'calling', actions: ['assemble', recordAnswer] },
          { guard: 'isFinishChunk', target: 'ending', actions: ['assemble', recordAnswer, assign({ output: ({ context }) => answerOutput(context, 'stop') })] },
          { actions: 'assemble' },
        ],
        'step.cancel.requested': { target: 'interrupted', actions: assign({ cancelled: true }) },
      },
    },
    recovering: {
      description: 'A failed request goes to the request-error listeners (retry with backoff, compact on overflow, or give up), by its normalized code.',
      invoke: {
        id: 'recover',
        src: 'recoverRequest',
        input: ({ context }) => {
          const f = finishOf(context) as Extract<Finish, { kind: 'error' }>;
          return { turn: context.turn, step: context.step, code: f.code, finish: f, failures: context.failures + 1, overflowRetried: context.overflowRetried };
        },
        onDone: { target: 'recovered', actions: assign({ recovery: ({ event }) => event.output }) },
        // A recovery that cannot decide gives up: the failure stands.
        onError: { target: 'failing', actions: assign({ recovery: { kind: 'give-up' } as const }) },
      },
      on: { 'step.cancel.requested': { target: 'ending', actions: assign({ cancelled: true, output: { reason: 'aborted' } }) } },
    },
    recovered: {
      always: [{ guard: 'isRetry', target: 'retrying' }, { target: 'failing' }],
    },
    retrying: {
      description: 'The listeners asked for another attempt: logged (model/retry), then the same request again after their delay.',
      entry: [
        assign({ failures: ({ context }) => context.failures + 1 }),
        {
          type: 'record',
          params: ({ context }) => {
            const f = finishOf(context);
            const code = f.kind === 'error' ? f.code : 'UNKNOWN';
            return draftRetry(context, context.failures, code, f.kind === 'error' ? f.message : '', delayOf(context));
          },
        },
      ],
      invoke: {
        src: 'wait',
        input: ({ context }) => ({ ms: delayOf(context) }),
        onDone: { target: 'streaming', actions: assign({ assembly: () => emptyAssembly(), recovery: undefined }) },
        onError: { target: 'streaming', actions: assign({ assembly: () => emptyAssembly(), recovery: undefined }) },
      },
      on: { 'step.cancel.requested': { target: 'ending', actions: assign({ cancelled: true, output: { reason: 'aborted' } }) } },
    },
    failing: {
      description: 'A final model failure: partial text is kept, half-streamed calls are dropped.',
      entry: [
        { type: 'record', params: ({ context }) => draftAssistant(context, withoutCalls(context.assembly), finishOf(context), context.assembly) },
        assign({
          output: ({ context }) => {
            const f = finishOf(context);
            return { reason: 'error' as const, finish: f, code: f.kind === 'error' ? f.code : 'UNKNOWN', ...(context.recovery?.kind === 'compact' ? { recovery: 'compact' as const } : {}) };
          },
        }),
      ],
      always: 'ending',
    },
    interrupted: {
      description: 'Cancelled mid-stream: partial text is kept, marked interrupted.',
      entry: [
        enqueueActions(({ context, enqueue, check }) => {
          if (check('hasPartialText')) {
            enqueue(recordAction(draftAssistant(context, withoutCalls(context.assembly), { kind: 'aborted' }, context.assembly, true)));
          }
        }),
        assign({ cancelled: true, output: { reason: 'aborted' } }),
      ],
      always: 'ending',
    },
    calling: {
      description: 'Tool calls validate and ask in parallel, dispatch in order; results are logged as they settle.',
      entry: 'spawnCalls',
      on: {
        'tool.call.ready': { actions: 'readyCall' },
        // The last call to settle ends the step in its own transition (ADR 0091); any other releases the calls it held back.
        'xstate.done.actor.*': [
          { guard: 'isLastToSettle', target: 'ending', actions: 'endCalling' },
          { actions: 'settleCall' },
        ],
        'step.cancel.requested': { actions: [assign({ cancelled: true }), 'cancelCalls'] },
      },
    },
    ending: {
      entry: { type: 'record', params: ({ context }) => draftStepEnd(context, context.output?.reason ?? 'error') },
      type: 'final',
    },
  },
});
