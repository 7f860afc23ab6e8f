/**
 * One delegation: requested → admitted (the registry's pre-check passed) →
 * running (the child session, its own log) → reporting (the bounded result
 * back to the parent) → done; with a refused path (no child is created), a
 * failed one (the child could not be created, or it crashed: a result with a
 * named code, never a hang) and a cancelled one (the parent's cancel reaches
 * the child).
 *
 * The parent's log brackets a child that exists: `subagent/start` when it
 * runs, exactly one `subagent/end` on every path that started it, none on a
 * path that did not. On a cancel the bracket closes at once, in the same
 * step as the cancel, while the child's own turn ends `aborted` in its own
 * log behind it.
 */
import { assign, enqueueActions, setup } from 'xstate';
import type { Draft } from '../log/entries.js';
import { SubagentCode } from '../log/codes.js';
import { notProvided, recordAction } from './not-provided.js';
import {
  cancelledResult,
  draftSubagentEnd,
  draftSubagentStart,
  failedResult,
  refusedResult,
  reportedResult,
  type AdmissionVerdict,
  type ChildReport,
  type SubagentInput,
  type SubagentResult,
} from './subagent-result.js';

export interface SubagentContext {
  input: SubagentInput;
  verdict?: AdmissionVerdict;
  /** Where the child's log lives, once it exists. */
  location?: string;
  /** The model the child runs on, as its `session/start` says. */
  model?: string;
  /** Whether `subagent/start` is logged (so `subagent/end` is owed). */
  started: boolean;
  report?: ChildReport;
  failure?: { code: string; message: string };
  cause?: string;
  result?: SubagentResult;
}

export type SubagentEvent = { type: 'subagent.cancel.requested'; cause: string };

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

export const subagentMachine = setup({
  types: {
    context: {} as SubagentContext,
    input: {} as SubagentInput,
    events: {} as SubagentEvent,
    output: {} as SubagentResult,
  },
  actors: {
    admitRequest: notProvided<AdmissionVerdict, SubagentInput>('admitRequest'),
    openChild: notProvided<{ location: string; model?: string }, SubagentInput>('openChild'),
    runChild: notProvided<ChildReport, SubagentInput>('runChild'),
    cancelChild: notProvided<void, { cause: string }>('cancelChild'),
  },
  actions: {
    record: (_, _draft: Draft) => {
      throw new Error('record: not provided');
    },
    closeIfStarted: enqueueActions(({ context, enqueue }) => {
      if (context.started) enqueue(recordAction(draftSubagentEnd(context.input, 'error', context.failure?.code)));
    }),
  },
  guards: {
    isAdmitted: (_, v: AdmissionVerdict) => v.ok,
  },
}).createMachine({
  id: 'subagent',
  context: ({ input }) => ({ input, started: false }),
  initial: 'requested',
  output: ({ context }) => context.result ?? failedResult(context.input, SubagentCode.SUBAGENT_FAILED, 'the delegation ended without a result', context.started, context.location),
  states: {
    requested: {
      description: 'The registry checks the request (provider, depth, tool filter, tree budget) before any child exists.',
      invoke: {
        src: 'admitRequest',
        input: ({ context }) => context.input,
        onDone: [
          { guard: { type: 'isAdmitted', params: ({ event }) => event.output }, target: 'admitted', actions: assign({ verdict: ({ event }) => event.output }) },
          { target: 'refused', actions: assign({ verdict: ({ event }) => event.output }) },
        ],
        onError: { target: 'refused', actions: assign({ verdict: ({ event }) => ({ ok: false as const, code: SubagentCode.SUBAGENT_REFUSED, message: `the registry failed: ${message(event.error)}` }) }) },
      },
      on: { 'subagent.cancel.requested': { target: 'cancelled', actions: assign({ cause: ({ event }) => event.cause }) } },
    },
    admitted: {
      description: 'The provider creates the child: its own log, its depth and parent in its session/start, approval never.',
      invoke: {
        src: 'openChild',
        input: ({ context }) => context.input,
        onDone: { target: 'running', actions: assign({ location: ({ event }) => event.output.location, model: ({ event }) => event.output.model }) },
        onError: { target: 'failed', actions: assign({ failure: ({ event }) => ({ code: SubagentCode.SUBAGENT_OPEN_FAILED, message: `the child could not be created: ${message(event.error)}` }) }) },
      },
      on: { 'subagent.cancel.requested': { target: 'cancelled', actions: assign({ cause: ({ event }) => event.cause }) } },
    },
    running: {
      description: 'The child runs its one turn; subagent/start brackets it in the parent log.',
      entry: [{ type: 'record', params: ({ context }) => draftSubagentStart(context.input, context.model) }, assign({ started: true })],
      invoke: {
        src: 'runChild',
        input: ({ context }) => context.input,
        onDone: { target: 'reporting', actions: assign({ report: ({ event }) => event.output }) },
        onError: { target: 'failed', actions: assign({ failure: ({ event }) => ({ code: SubagentCode.SUBAGENT_CRASHED, message: `the child crashed: ${message(event.error)}` }) }) },
      },
      on: { 'subagent.cancel.requested': { target: 'cancelling', actions: assign({ cause: ({ event }) => event.cause }) } },
    },
    cancelling: {
      description: "The bracket closes now; the cancel goes on to the child, whose own turn ends aborted in its own log.",
      entry: {
        type: 'record',
        params: ({ context }) => draftSubagentEnd(context.input, 'aborted', context.cause === SubagentCode.TREE_BUDGET_EXHAUSTED ? context.cause : SubagentCode.ABORTED),
      },
      invoke: {
        src: 'cancelChild',
        input: ({ context }) => ({ cause: context.cause ?? 'cancel' }),
        onDone: 'cancelled',
        onError: 'cancelled',
      },
    },
    reporting: {
      description: 'The bounded result goes back to the parent through the call that asked; subagent/end closes the bracket.',
      entry: [
        { type: 'record', params: ({ context }) => draftSubagentEnd(context.input, context.report!.reason, context.report!.code, context.report!.usage) },
        assign({ result: ({ context }) => reportedResult(context.input, context.report!, context.location) }),
      ],
      always: 'done',
    },
    done: { type: 'final' },
    failed: {
      type: 'final',
      entry: ['closeIfStarted', assign({ result: ({ context }) => failedResult(context.input, context.failure!.code, context.failure!.message, context.started, context.location) })],
    },
    cancelled: {
      type: 'final',
      entry: assign({ result: ({ context }) => cancelledResult(context.input, context.cause ?? 'cancel', context.started, context.location) }),
    },
    refused: {
      type: 'final',
      description: 'Nothing was created: the result names what the registry refused.',
      entry: assign({ result: ({ context }) => refusedResult(context.input, context.verdict ?? { ok: false, code: SubagentCode.SUBAGENT_REFUSED, message: 'refused' }) }),
    },
  },
});
