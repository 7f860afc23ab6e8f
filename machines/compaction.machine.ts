/**
 * Compaction: measure, prune oversized tool results (model-free), measure
 * again, and — when still over the limit, or when asked outright — summarize
 * the oldest whole units with one model request. Everything it changes is an
 * ordinary logged replacement; the brackets `compaction/start|end` are
 * log-only (I9). Every effect is provided by the host: the synchronous ones
 * (measuring, planning the prunes and the summary) as actions that answer
 * with an event at once, so nothing can come between them (ADR 0021); the
 * model request and the flush as actors.
 */
import { assign, enqueueActions, setup } from 'xstate';
import { codePoints, tokensOfChars } from '../log/context/tokens.js';
import type { Draft, DraftOf } from '../log/entries.js';
import {
  draftCompactionEnd,
  draftCompactionStart,
  draftCompactionSummary,
  draftSummaryMessage,
  type CompactionOutcome,
  type CompactionTrigger,
  type ContextMeasure,
  type SummaryRequestPlan,
} from './compaction-drafts.js';
import { draftUnsaved } from './drafts.js';
import { notProvided, recordAction } from './not-provided.js';
import { notDurableCause } from '../log/not-durable.js';

export interface CompactionInput {
  trigger: CompactionTrigger;
  /** The running turn, if any: the brackets name it and its input stays whole. */
  turn?: string;
}

/** The model's answer to a summary request. Failures are data. */
export type SummaryAnswer = { ok: true; text: string } | { ok: false; code: string; message: string };

export interface CompactionOutput {
  outcome: CompactionOutcome;
  tokensBefore: number;
  tokensAfter: number;
  /** The visible history measured smaller afterwards: only then is an overflowed request worth retrying. */
  shrank: boolean;
  /** Set when compaction/end could not be made durable: the store's error (ADR 0017). */
  unsaved?: string;
}

export interface CompactionContext {
  trigger: CompactionTrigger;
  turn?: string;
  before?: ContextMeasure;
  after?: ContextMeasure;
  /** Whether compaction/start is logged (so compaction/end is owed). */
  opened: boolean;
  pruned: number;
  plan?: SummaryRequestPlan;
  summarized: boolean;
  failed: boolean;
  cancelled: boolean;
  unsaved?: string;
}

export type CompactionEvent =
  | { type: 'compaction.cancel.requested' }
  /** The host's answers to the `measure`, `planPrune` and `planSummary` actions, sent before any other event reaches the compaction. */
  | { type: 'compaction.measured'; measure: ContextMeasure }
  | { type: 'compaction.measure.failed'; error: string }
  | { type: 'compaction.pruned'; drafts: DraftOf<'tool/result'>[] }
  | { type: 'compaction.prune.failed'; error: string }
  | { type: 'compaction.planned'; plan: SummaryRequestPlan | null }
  | { type: 'compaction.plan.failed'; error: string };

/** Contract: pure. */
export function outcomeOf(c: Pick<CompactionContext, 'opened' | 'cancelled' | 'summarized' | 'failed' | 'pruned'>): CompactionOutcome {
  if (c.cancelled) return 'interrupted';
  if (c.summarized) return 'compacted';
  if (c.pruned > 0) return 'pruned';
  if (c.failed || !c.opened) return 'failed';
  return 'nothing-to-do';
}

const tokensBefore = (c: CompactionContext) => c.before?.tokens ?? 0;
const tokensAfter = (c: CompactionContext) => c.after?.tokens ?? tokensBefore(c);

export const compactionMachine = setup({
  types: {
    context: {} as CompactionContext,
    input: {} as CompactionInput,
    events: {} as CompactionEvent,
    output: {} as CompactionOutput,
  },
  actors: {
    requestSummary: notProvided<SummaryAnswer, SummaryRequestPlan>('requestSummary'),
    flushLog: notProvided<void, void>('flushLog'),
  },
  actions: {
    record: (_, _draft: Draft) => {
      throw new Error('record: not provided');
    },
    /** Synchronous (ADR 0018): the host measures the next request and answers `compaction.measured` (or `.measure.failed`). Must not throw. */
    measure: (_) => {
      throw new Error('measure: not provided');
    },
    /** Synchronous: the host plans the prunes and answers `compaction.pruned` (or `.prune.failed`). Must not throw. */
    planPrune: (_) => {
      throw new Error('planPrune: not provided');
    },
    /** Synchronous: the host plans the summary request and answers `compaction.planned` (or `.plan.failed`). Must not throw. */
    planSummary: (_, _p: { trigger: CompactionTrigger; turn?: string }) => {
      throw new Error('planSummary: not provided');
    },
    markCancelled: assign({ cancelled: true }),
    recordPrunes: enqueueActions(({ enqueue }, drafts: readonly DraftOf<'tool/result'>[] | undefined) => {
      for (const d of drafts ?? []) enqueue(recordAction(d));
      enqueue.assign({ pruned: ({ context }) => context.pruned + (drafts?.length ?? 0) });
    }),
    recordSummary: enqueueActions(({ context, enqueue }, text: string) => {
      const plan = context.plan!;
      enqueue(recordAction(draftCompactionSummary(plan, text)));
      enqueue(recordAction(draftSummaryMessage(plan, text)));
      enqueue.assign({ summarized: true });
    }),
  },
  guards: {
    isSummaryWanted: ({ context }, m: ContextMeasure | undefined) => context.trigger !== 'proactive' || m === undefined || m.tokens >= m.limit,
    hasPlan: (_, plan: SummaryRequestPlan | null | undefined) => plan != null,
    isAnswered: ({ context }, a: SummaryAnswer | undefined) =>
      a?.ok === true && a.text.trim().length > 0 && (context.plan?.replacing === undefined || tokensOfChars(codePoints(a.text)) < context.plan.replacing),
  },
}).createMachine({
  id: 'compaction',
  context: ({ input }) => ({
    trigger: input.trigger,
    ...(input.turn !== undefined ? { turn: input.turn } : {}),
    opened: false,
    pruned: 0,
    summarized: false,
    failed: false,
    cancelled: false,
  }),
  initial: 'measuring',
  output: ({ context }) => ({
    outcome: outcomeOf(context),
    tokensBefore: tokensBefore(context),
    tokensAfter: tokensAfter(context),
    shrank: tokensAfter(context) < tokensBefore(context),
    ...(context.unsaved !== undefined ? { unsaved: context.unsaved } : {}),
  }),
  states: {
    measuring: {
      description: 'Measures the next request; nothing is logged yet, so a failure here leaves no bracket.',
      entry: 'measure',
      on: {
        'compaction.measured': {
          target: 'pruning',
          actions: [
            assign({ before: ({ event }) => event.measure, opened: true }),
            { type: 'record', params: ({ context }) => draftCompactionStart(context.trigger, context.turn, context.before ?? { tokens: 0, source: 'estimate', window: 1, limit: 1 }) },
          ],
        },
        'compaction.measure.failed': { target: 'done', actions: assign({ failed: true }) },
        'compaction.cancel.requested': { target: 'done', actions: 'markCancelled' },
      },
    },
    pruning: {
      description: 'Stage 1, model-free: oversized tool results are replaced by their head and tail, the call ids kept.',
      entry: 'planPrune',
      on: {
        'compaction.pruned': { target: 'remeasuring', actions: { type: 'recordPrunes', params: ({ event }) => event.drafts } },
        'compaction.prune.failed': 'remeasuring',
        'compaction.cancel.requested': { target: 'closing', actions: 'markCancelled' },
      },
    },
    remeasuring: {
      entry: 'measure',
      on: {
        'compaction.measured': [
          { guard: { type: 'isSummaryWanted', params: ({ event }) => event.measure }, target: 'planning', actions: assign({ after: ({ event }) => event.measure }) },
          { target: 'closing', actions: assign({ after: ({ event }) => event.measure }) },
        ],
        'compaction.measure.failed': 'closing',
        'compaction.cancel.requested': { target: 'closing', actions: 'markCancelled' },
      },
    },
    planning: {
      description: 'Stage 2: picks the oldest whole units to summarize (the current input and a recent tail stay) and the request that replays them.',
      entry: { type: 'planSummary', params: ({ context }) => ({ trigger: context.trigger, ...(context.turn !== undefined ? { turn: context.turn } : {}) }) },
      on: {
        'compaction.planned': [
          { guard: { type: 'hasPlan', params: ({ event }) => event.plan }, target: 'summarizing', actions: assign({ plan: ({ event }) => event.plan ?? undefined }) },
          { target: 'closing' },
        ],
        'compaction.plan.failed': { target: 'closing', actions: assign({ failed: true }) },
        'compaction.cancel.requested': { target: 'closing', actions: 'markCancelled' },
      },
    },
    summarizing: {
      description: 'One model request; leaving this state aborts it.',
      invoke: {
        src: 'requestSummary',
        input: ({ context }) => context.plan!,
        onDone: [
          {
            guard: { type: 'isAnswered', params: ({ event }) => event.output },
            target: 'settling',
            actions: { type: 'recordSummary', params: ({ event }) => (event.output?.ok ? event.output.text : '') },
          },
          { target: 'closing', actions: assign({ failed: true }) },
        ],
        onError: { target: 'closing', actions: assign({ failed: true }) },
      },
      on: { 'compaction.cancel.requested': { target: 'closing', actions: 'markCancelled' } },
    },
    settling: {
      description: 'The summary is logged; only the measurement for compaction/end is left.',
      entry: 'measure',
      on: {
        'compaction.measured': { target: 'closing', actions: assign({ after: ({ event }) => event.measure }) },
        'compaction.measure.failed': 'closing',
      },
    },
    closing: {
      description: 'compaction/end closes the bracket whatever happened, and is flushed before the caller goes on.',
      entry: { type: 'record', params: ({ context }) => draftCompactionEnd(outcomeOf(context), tokensBefore(context), tokensAfter(context)) },
      invoke: {
        src: 'flushLog',
        onDone: 'done',
        onError: {
          target: 'done',
          // The log says so (`log/not-durable`), and the output tells the turn or the caller.
          actions: enqueueActions(({ event, enqueue }) => {
            const note = draftUnsaved(event.error);
            if (note) enqueue(recordAction(note));
            enqueue.assign({ unsaved: notDurableCause(event.error) });
          }),
        },
      },
    },
    done: { type: 'final' },
  },
});
