/**
 * One turn: claim the input, run the pre-step waterfall, then step after step
 * while tools owe the model a request; exactly one `turn/start` and one
 * `turn/end` (I3), the end durable before anyone hears of it.
 */
import { and, assign, enqueueActions, setup } from 'xstate';
import { TurnEndCode } from '../log/codes.js';
import type { Draft } from '../log/entries.js';
import type { Origin, TurnEndReason } from '../log/entry-values.js';
import { nthStep } from '../log/ids.js';
import { notDurableCause } from '../log/not-durable.js';
import { compactionMachine, type CompactionOutput } from './compaction.machine.js';
import type { CompactionTrigger } from './compaction-drafts.js';
import { draftTurnEnd, draftTurnStart, draftUnsaved, draftUserMessage } from './drafts.js';
import { notProvided, recordAction } from './not-provided.js';
import { stepMachine, type StepOutput, type StepResume } from './step.machine.js';
import type { Queued } from './queued.js';
import type { PreStepDecision } from '../ports/hooks.js';
import { DEFAULT_MAX_STEPS } from '../ports/loop.js';

/** The `turn/end` cause of a turn whose input the pre-step rewrote to nothing (replay reads it back as that verdict). */
export const EMPTY_INPUT_CAUSE = 'the pre-step left no input; nothing was sent to the model';

/** Contract: pure; an input of nothing but white space is nothing: a model asked with it would answer an empty user message. */
export const isNothing = (d: PreStepDecision): boolean => d.kind === 'enter' && d.text.trim() === '';

export interface TurnInput {
  turn: string;
  input: string;
  /** The `session/input` the input was logged as (its `turn/start` names it). */
  from?: number;
  /** Context queued with `inject` before this turn began. */
  injected?: Queued[];
  /** Who the input is from: the user (default), or the harness (a resume note). */
  origin?: Origin;
  maxSteps?: number;
  /**
   * A turn a process left waiting on an approval, gone on with after a restart (ADR 0027): its `turn/start` is
   * logged already, and it goes on with step number `steps` (logged too) from that step's calls.
   */
  resume?: { steps: number; step: StepResume };
  /**
   * A turn a process left waiting on a spent budget's question (ADR 0047), gone on with after a restart: its
   * `turn/start` and its `steps` steps are logged, and it goes straight back to asking.
   */
  resumeBudget?: { steps: number };
}

/** What the budget question came to: go on with the call (the cap was raised), or end the turn `BUDGET_EXHAUSTED`. */
export type BudgetVerdict = { go: true } | { go: false; cause: string };

export interface TurnOutput {
  turn: string;
  reason: TurnEndReason;
  steps: number;
  cause?: string;
  code?: string;
  /** Input queued for this turn that no step took: the session re-queues it. */
  leftoverSteer: Queued[];
  leftoverInject: Queued[];
}

export interface TurnContext {
  turn: string;
  input: string;
  from?: number;
  text: string;
  origin: Origin;
  maxSteps: number;
  steps: number;
  steer: Queued[];
  inject: Queued[];
  cancelled: boolean;
  last?: StepOutput;
  end?: { reason: TurnEndReason; cause?: string; code?: string };
  /** Why the next compaction runs: the pressure guard (proactive) or an overflowed request (reactive). */
  trigger?: CompactionTrigger;
  /** An overflowed request is retried once after compaction; set until a step gets past it. */
  overflowRetried?: boolean;
  /** The step to go on with, until its step starts (ADR 0027). */
  resume?: StepResume;
  /** Gone on with at a spent budget's question, until it is answered (ADR 0047). */
  resumeBudget?: boolean;
}

export type TurnEvent =
  | { type: 'turn.input.steered'; seq: number; text: string }
  | { type: 'turn.input.injected'; seq: number; text: string }
  | { type: 'turn.cancel.requested'; cause?: string };

export const turnMachine = setup({
  types: {
    context: {} as TurnContext,
    input: {} as TurnInput,
    events: {} as TurnEvent,
    output: {} as TurnOutput,
  },
  actors: {
    runPreStep: notProvided<PreStepDecision, { turn: string; text: string }>('runPreStep'),
    /** Logs the spent budget's figures, asks whoever may raise it (or decides without asking), logs the answer. */
    askBudget: notProvided<BudgetVerdict, { turn: string }>('askBudget'),
    flushLog: notProvided<void, void>('flushLog'),
    step: stepMachine,
    compaction: compactionMachine,
  },
  actions: {
    record: (_, _draft: Draft) => {
      throw new Error('record: not provided');
    },
    end: assign((_, end: { reason: TurnEndReason; cause?: string; code?: string }) => ({ end })),
    deliverQueued: enqueueActions(({ context, enqueue }) => {
      // Nothing queued (most steps): no assign, so no snapshot copy (ADR 0007). A resumed step is mid-way: its
      // calls owe results before anything else reaches the model, so queued input waits for the next step.
      if ((context.steer.length === 0 && context.inject.length === 0) || context.resume) return;
      for (const q of context.steer) enqueue(recordAction(draftUserMessage(context.turn, q.text, 'steer', q.seq)));
      for (const q of context.inject) enqueue(recordAction(draftUserMessage(context.turn, q.text, 'inject', q.seq)));
      enqueue.assign({ steer: [], inject: [] });
    }),
    /** The step's output kept as `last`; an overflow retried once stays so only while its step failed on it again. */
    settleStep: assign({
      resume: undefined,
      last: ({ event }) => (event as unknown as { output: StepOutput }).output,
      overflowRetried: ({ context, event }) => (event as unknown as { output: StepOutput }).output?.code === TurnEndCode.CONTEXT_WINDOW_EXCEEDED && context.overflowRetried === true,
    }),
    countStep: assign({ steps: ({ context }) => context.steps + 1 }),
    forwardCancelToCompaction: enqueueActions(({ enqueue }) => enqueue.sendTo('compaction', { type: 'compaction.cancel.requested' })),
    queueSteer: assign({ steer: ({ context, event }) => (event.type === 'turn.input.steered' ? [...context.steer, { seq: event.seq, text: event.text }] : context.steer) }),
    queueInject: assign({ inject: ({ context, event }) => (event.type === 'turn.input.injected' ? [...context.inject, { seq: event.seq, text: event.text }] : context.inject) }),
    forwardCancel: enqueueActions(({ enqueue }) => enqueue.sendTo('step', { type: 'step.cancel.requested' })),
  },
  guards: {
    isRejected: (_, d: PreStepDecision) => d.kind === 'reject',
    isEmptyInput: (_, d: PreStepDecision) => isNothing(d),
    isAborted: ({ context }) => context.cancelled || context.last?.reason === 'aborted',
    // A step's output is decided in the transition that brings it (ADR 0091): guards run before its actions, so they
    // read the output off the done event, not off `last`.
    isStepAborted: ({ context }, out: StepOutput) => context.cancelled || out.reason === 'aborted',
    isStepError: (_, out: StepOutput) => out.reason === 'error',
    isStepLength: (_, out: StepOutput) => out.reason === 'length',
    /** The step cap; a loop row may provide its own (the `agent-loop` row's `isAtMaxSteps`). */
    isAtMaxSteps: ({ context }) => context.steps >= context.maxSteps,
    /** Read off the step's done event (no params, so the step cap can be `and`-ed with it). */
    isOwed: ({ event }) => (event as unknown as { output?: StepOutput }).output?.reason === 'tool-calls',
    hasSteer: ({ context }) => context.steer.length > 0,
    /**
     * Provided by the host: the pressure guard, a synchronous measurement of the next request (ADR 0007) —
     * `isPressing` over the session's meter. Must not throw (a failed measurement is not over threshold).
     */
    isOverThreshold: (_) => false,
    /**
     * Provided by the host: the session's budget (ADR 0047) is spent, read from logged figures only — so the next
     * model call waits on the budget question. Must not throw.
     */
    isOverBudget: (_) => false,
    isBudgetRaised: (_, v: BudgetVerdict) => v.go,
    /** The request-error listeners asked for it (the built-in one: an overflow, once per turn). */
    isRecoverableOverflow: (_, out: StepOutput) => out.recovery === 'compact',
    isUnshrunkOverflow: ({ context }, out: CompactionOutput | undefined) => context.trigger === 'reactive' && !out?.shrank,
    isUnsavedCompaction: (_, out: CompactionOutput | undefined) => out?.unsaved !== undefined,
    isResumed: ({ context }) => context.resume !== undefined,
    isBudgetResumed: ({ context }) => context.resumeBudget === true,
  },
}).createMachine({
  id: 'turn',
  context: ({ input }) => ({
    turn: input.turn,
    input: input.input,
    ...(input.from !== undefined ? { from: input.from } : {}),
    text: input.input,
    origin: input.origin ?? 'user',
    maxSteps: input.maxSteps ?? DEFAULT_MAX_STEPS,
    // A resumed turn's step is counted again as it is re-entered.
    steps: input.resume ? input.resume.steps - 1 : (input.resumeBudget?.steps ?? 0),
    steer: [],
    inject: input.injected ?? [],
    cancelled: false,
    ...(input.resume ? { resume: input.resume.step } : {}),
    ...(input.resumeBudget ? { resumeBudget: true } : {}),
  }),
  initial: 'opening',
  entry: enqueueActions(({ context, enqueue, check }) => {
    if (!check('isResumed') && !check('isBudgetResumed')) enqueue(recordAction(draftTurnStart(context.turn, context.input, context.from)));
  }),
  output: ({ context }) => ({
    turn: context.turn,
    reason: context.end?.reason ?? 'error',
    steps: context.steps,
    ...(context.end?.cause !== undefined ? { cause: context.end.cause } : {}),
    ...(context.end?.code !== undefined ? { code: context.end.code } : {}),
    leftoverSteer: context.steer,
    leftoverInject: context.inject,
  }),
  on: {
    'turn.input.steered': { actions: 'queueSteer' },
    'turn.input.injected': { actions: 'queueInject' },
  },
  states: {
    opening: {
      description: 'A turn gone on with after a restart (a call of its open step waiting on an approval) goes straight back to that step (ADR 0027).',
      always: [{ guard: 'isResumed', target: 'stepping' }, { guard: 'isBudgetResumed', target: 'budgeting' }, { target: 'preStep' }],
    },
    preStep: {
      description: 'The pre-step waterfall may reject the claimed input (the turn still closes, with zero steps) or rewrite it; a rewrite to nothing closes the turn completed with zero steps, sending the model nothing.',
      invoke: {
        src: 'runPreStep',
        input: ({ context }) => ({ turn: context.turn, text: context.input }),
        onDone: [
          {
            guard: { type: 'isRejected', params: ({ event }) => event.output },
            target: 'ending',
            actions: assign({ end: ({ event }) => ({ reason: 'blocked' as const, cause: event.output.kind === 'reject' ? event.output.reason : '' }) }),
          },
          {
            guard: { type: 'isEmptyInput', params: ({ event }) => event.output },
            target: 'ending',
            actions: assign({ end: { reason: 'completed' as const, cause: EMPTY_INPUT_CAUSE } }),
          },
          {
            target: 'measuring',
            actions: [
              assign({ text: ({ event }) => (event.output.kind === 'enter' ? event.output.text : '') }),
              { type: 'record', params: ({ context }) => draftUserMessage(context.turn, context.text, context.origin) },
            ],
          },
        ],
        onError: { target: 'ending', actions: assign({ end: ({ event }) => ({ reason: 'error' as const, code: TurnEndCode.PRE_STEP_FAILED, cause: String(event.error) }) }) },
      },
      on: { 'turn.cancel.requested': { target: 'ending', actions: [assign({ cancelled: true }), { type: 'end', params: { reason: 'aborted', cause: 'user' } }] } },
    },
    measuring: {
      description: 'The pressure guard: queued steer and inject input is logged, then the next request is measured; at or over threshold × window, compaction runs first.',
      entry: 'deliverQueued',
      always: [{ guard: 'isOverBudget', target: 'budgeting' }, { guard: 'isOverThreshold', target: 'compacting', actions: assign({ trigger: 'proactive' as const }) }, { target: 'stepping' }],
    },
    budgeting: {
      description: 'The budget is spent before the next model call (ADR 0047): the call waits on the budget question; a raise measures again, anything else ends the turn BUDGET_EXHAUSTED.',
      invoke: {
        src: 'askBudget',
        input: ({ context }) => ({ turn: context.turn }),
        onDone: [
          { guard: { type: 'isBudgetRaised', params: ({ event }) => event.output }, target: 'measuring', reenter: true, actions: assign({ resumeBudget: undefined }) },
          { target: 'ending', actions: assign({ end: ({ event }) => ({ reason: 'error' as const, code: TurnEndCode.BUDGET_EXHAUSTED, cause: event.output.go ? '' : event.output.cause }) }) },
        ],
        onError: { target: 'ending', actions: assign({ end: ({ event }) => ({ reason: 'error' as const, code: TurnEndCode.BUDGET_EXHAUSTED, cause: String(event.error) }) }) },
      },
      on: { 'turn.cancel.requested': { target: 'ending', actions: [assign({ cancelled: true }), { type: 'end', params: { reason: 'aborted', cause: 'user' } }] } },
    },
    compacting: {
      description: 'The compaction actor prunes and summarizes; steer and inject arriving meanwhile stay queued. An overflowed request is retried only if the history shrank.',
      invoke: {
        id: 'compaction',
        src: 'compaction',
        input: ({ context }) => ({ trigger: context.trigger ?? 'proactive', turn: context.turn }),
        onDone: [
          { guard: 'isAborted', target: 'ending', actions: { type: 'end', params: { reason: 'aborted', cause: 'user' } } },
          {
            guard: { type: 'isUnsavedCompaction', params: ({ event }) => event.output },
            target: 'ending',
            actions: assign({ end: ({ event }) => ({ reason: 'error' as const, code: TurnEndCode.LOG_NOT_DURABLE, cause: event.output?.unsaved ?? '' }) }),
          },
          {
            guard: { type: 'isUnshrunkOverflow', params: ({ event }) => event.output },
            target: 'ending',
            actions: { type: 'end', params: { reason: 'error', code: TurnEndCode.CONTEXT_WINDOW_EXCEEDED, cause: 'compaction could not shrink the context' } },
          },
          // Steer and inject that arrived during compaction are logged just before the step. From `measuring` there is
          // nothing to deliver (it delivered in its entry, in the same macrostep), so `stepping`'s entry does not look (ADR 0109).
          { target: 'stepping', actions: 'deliverQueued' },
        ],
      },
      on: { 'turn.cancel.requested': { actions: [assign({ cancelled: true }), 'forwardCancelToCompaction'] } },
    },
    stepping: {
      description: 'One step per model request; steer and inject that arrived during compaction are logged just before it.',
      entry: 'countStep',
      invoke: {
        id: 'step',
        src: 'step',
        input: ({ context }) => ({ turn: context.turn, step: nthStep(context.turn, context.steps), overflowRetried: context.overflowRetried === true, ...(context.resume ? { resume: context.resume } : {}) }),
        // Where the turn goes is decided in the transition that brings the step's output, the step cap included (ADR 0091).
        onDone: [
          { guard: { type: 'isStepAborted', params: ({ event }) => event.output }, target: 'ending', actions: ['settleStep', { type: 'end', params: { reason: 'aborted', cause: 'user' } }] },
          {
            guard: { type: 'isRecoverableOverflow', params: ({ event }) => event.output },
            target: 'compacting',
            actions: ['settleStep', assign({ trigger: 'reactive' as const, overflowRetried: true })],
          },
          {
            guard: { type: 'isStepError', params: ({ event }) => event.output },
            target: 'ending',
            actions: [
              'settleStep',
              assign({
                end: ({ context }) => ({ reason: 'error' as const, code: String(context.last?.code ?? 'UNKNOWN'), ...(context.last?.cause !== undefined ? { cause: context.last.cause } : {}) }),
              }),
            ],
          },
          { guard: { type: 'isStepLength', params: ({ event }) => event.output }, target: 'ending', actions: ['settleStep', { type: 'end', params: { reason: 'max-tokens' } }] },
          { guard: and(['isOwed', 'isAtMaxSteps']), target: 'ending', actions: ['settleStep', { type: 'end', params: { reason: 'max-steps' } }] },
          { guard: 'isOwed', target: 'measuring', actions: 'settleStep' },
          { guard: 'hasSteer', target: 'measuring', actions: 'settleStep' },
          { target: 'ending', actions: ['settleStep', { type: 'end', params: { reason: 'completed' } }] },
        ],
      },
      on: { 'turn.cancel.requested': { actions: [assign({ cancelled: true }), 'forwardCancel'] } },
    },
    ending: {
      description: 'turn/end is flushed before the turn reports done (save before notify). If it cannot be saved the turn reports LOG_NOT_DURABLE, never the reason the unsaved entry states.',
      entry: {
        type: 'record',
        params: ({ context }) => draftTurnEnd(context.turn, context.end?.reason ?? 'error', context.steps, { cause: context.end?.cause, code: context.end?.code }),
      },
      invoke: {
        src: 'flushLog',
        onDone: 'done',
        onError: {
          target: 'done',
          // The log says so; the first failure is the one reported (a turn ended by an unsaved result keeps that cause).
          actions: enqueueActions(({ context, event, enqueue }) => {
            const note = draftUnsaved(event.error);
            if (note) enqueue(recordAction(note));
            if (context.end?.code !== TurnEndCode.LOG_NOT_DURABLE) enqueue.assign({ end: { reason: 'error', code: TurnEndCode.LOG_NOT_DURABLE, cause: notDurableCause(event.error) } });
          }),
        },
      },
    },
    done: { type: 'final' },
  },
});
