/**
 * One tool call: validate → pre-execute (policy, guards) → approval → wait for
 * release → dispatch (durable) → execute → result (durable).
 *
 * A read-only, idempotent call skips both flushes (ADR 0072): running it twice
 * changes nothing, so its dispatch and result ride the next flush something
 * else needs (a non-idempotent dispatch, the turn's end, a saved input).
 *
 * Every path to `done` records exactly one `tool/result` (I2); no path
 * reaches `dispatching` without a passed validation and an allow (I4, I6).
 */
import { assign, enqueueActions, sendParent, setup } from 'xstate';
import { notProvided, recordAction } from './not-provided.js';
import type { Draft } from '../log/entries.js';
import { ToolResultCode } from '../log/codes.js';
import { notDurableCause } from '../log/not-durable.js';
import type { ApprovalAnswer, Decision } from '../ports/approval.js';
import { draftApprovalAsked, draftApprovalDecided, draftDispatch, draftResult, draftUnsaved, type CallRef } from './drafts.js';

export interface ToolCallInput extends CallRef {
  name: string;
  arguments: string;
  /**
   * The approval answer the log holds already (a step gone on with after a restart, or a fork that answered anew),
   * never asked for again (ADR 0031): an allow stands in for the question when the call is decided `ask` again; any
   * other answer denies the call unless the policy denies it first.
   */
  answered?: ApprovalAnswer;
}

export type Validation =
  | { ok: true; readOnly: boolean; idempotent: boolean; args: unknown }
  | { ok: false; code: string; message: string };

export interface ToolOutcome {
  status: 'ok' | 'error' | 'unknown';
  content: string;
  code?: string;
}

export interface ToolCallContext extends ToolCallInput {
  validation?: Validation;
  reason?: string;
  /** Why a flush of this call's entries failed (its dispatch or its result could not be saved). */
  unsaved?: string;
}

export type ToolCallEvent =
  | { type: 'tool.call.released' }
  | { type: 'tool.cancel.requested' };

export interface ToolCallOutput {
  callId: string;
  /** Set when the call's dispatch or result could not be made durable: the step must not go on to the model (ADR 0017). */
  unsaved?: string;
}

/** `tool/dispatch` logged: `record` with the draft as its params, so no `enqueueActions` is resolved for it (ADR 0109). */
const recordDispatch = {
  type: 'record',
  params: ({ context }: { context: ToolCallContext }) => draftDispatch(context, context.validation?.ok === true && context.validation.idempotent),
} as const;

export const toolCallMachine = setup({
  types: {
    context: {} as ToolCallContext,
    input: {} as ToolCallInput,
    events: {} as ToolCallEvent,
    output: {} as ToolCallOutput,
  },
  actors: {
    decideCall: notProvided<Decision, ToolCallContext>('decideCall'),
    askApproval: notProvided<ApprovalAnswer, ToolCallContext>('askApproval'),
    executeTool: notProvided<ToolOutcome, ToolCallContext>('executeTool'),
    flushLog: notProvided<void, void>('flushLog'),
  },
  actions: {
    record: (_, _draft: Draft) => {
      throw new Error('record: not provided');
    },
    /**
     * Pure and synchronous, so an action, not an actor (ADR 0007), and one that only computes: the host provides it
     * as an `assign` of `validation` (the call checked against its tool's schema), so the call goes on in the same
     * macrostep, with no event to answer it (ADR 0033). It must not throw; a validator that fails assigns a rejection.
     */
    validateCall: (_, _call: { name: string; arguments: string }) => {
      throw new Error('validateCall: not provided');
    },
    /** A flush failed: the log says so (`log/not-durable`), and the first failure is the one the output reports. */
    markUnsaved: enqueueActions(({ context, event, enqueue }) => {
      const error = (event as { error?: unknown }).error;
      const note = draftUnsaved(error);
      if (note) enqueue(recordAction(note));
      if (context.unsaved === undefined) enqueue.assign({ unsaved: notDurableCause(error) });
    }),
    notifyReady: sendParent(({ context }) => ({
      type: 'tool.call.ready' as const,
      callId: context.callId,
      readOnly: context.validation?.ok === true && context.validation.readOnly,
    })),
  },
  guards: {
    isValid: (_, v: Validation | undefined) => v?.ok === true,
    /** Read-only and idempotent (ADR 0072): a repair may mark it unknown or it may run again, and nothing is changed twice. */
    isRepeatable: ({ context }) => context.validation?.ok === true && context.validation.readOnly && context.validation.idempotent,
    /** Provided by the host: every appended entry is durable already (a store durable on append), so a flush would wait for nothing. */
    isLogDurable: (_) => false,
    isAllowed: (_, d: Decision) => d.kind === 'allow',
    isAsked: (_, d: Decision) => d.kind === 'ask',
    isApproved: (_, a: ApprovalAnswer) => a.outcome === 'allowed-once' || a.outcome === 'allowed-always',
    /** Asked, and the log holds an answer that allowed it: the answer is used, nothing is asked or logged again. */
    isAnsweredYes: ({ context }, d: Decision) => d.kind === 'ask' && context.answered !== undefined && /^allowed-/.test(context.answered.outcome),
    /** The log holds an answer that did not allow it: denied with that answer, unless the policy denies it first (a person's no stands over a policy's yes). */
    isAnsweredNo: ({ context }, d: Decision) => d.kind !== 'deny' && context.answered !== undefined && !/^allowed-/.test(context.answered.outcome),
  },
}).createMachine({
  id: 'tool-call',
  context: ({ input }) => ({ ...input }),
  initial: 'validating',
  output: ({ context }) => (context.unsaved === undefined ? { callId: context.callId } : { callId: context.callId, unsaved: context.unsaved }),
  states: {
    validating: {
      description: 'Unknown tools and arguments that fail the schema stop here (I4). Transient: the call is validated as it is created.',
      entry: { type: 'validateCall', params: ({ context }) => ({ name: context.name, arguments: context.arguments }) },
      always: [{ guard: { type: 'isValid', params: ({ context }) => context.validation }, target: 'checking' }, { target: 'rejected' }],
    },
    checking: {
      description: 'Pre-execute hooks and guards: allow, deny, or ask. A throwing policy denies (I6). An ask the log holds an allow for takes it; a logged no denies whatever the policy says now (ADR 0031).',
      invoke: {
        src: 'decideCall',
        input: ({ context }) => context,
        onDone: [
          {
            guard: { type: 'isAnsweredNo', params: ({ event }) => event.output },
            target: 'denied',
            actions: assign({ reason: ({ context }) => `approval ${context.answered!.outcome}` }),
          },
          { guard: { type: 'isAllowed', params: ({ event }) => event.output }, target: 'ready' },
          { guard: { type: 'isAnsweredYes', params: ({ event }) => event.output }, target: 'ready' },
          {
            guard: { type: 'isAsked', params: ({ event }) => event.output },
            target: 'asking',
            actions: assign({ reason: ({ event }) => (event.output.kind === 'ask' ? event.output.reason : '') }),
          },
          { target: 'denied', actions: assign({ reason: ({ event }) => (event.output.kind === 'deny' ? event.output.reason : 'denied') }) },
        ],
        onError: { target: 'denied', actions: assign({ reason: ({ event }) => `policy failed: ${String(event.error)}` }) },
      },
      on: { 'tool.cancel.requested': 'abortedBeforeDispatch' },
    },
    asking: {
      description: 'Waiting for a person or policy to answer. A missing, throwing or timed-out answerer denies (I6).',
      entry: { type: 'record', params: ({ context }) => draftApprovalAsked(context, context.reason ?? '') },
      invoke: {
        src: 'askApproval',
        input: ({ context }) => context,
        onDone: [
          {
            guard: { type: 'isApproved', params: ({ event }) => event.output },
            target: 'ready',
            actions: { type: 'record', params: ({ context, event }) => draftApprovalDecided(context, event.output.outcome, event.output.by, event.output.rule) },
          },
          {
            target: 'denied',
            actions: [
              { type: 'record', params: ({ context, event }) => draftApprovalDecided(context, event.output.outcome, event.output.by) },
              assign({ reason: ({ event }) => `approval ${event.output.outcome}` }),
            ],
          },
        ],
        onError: {
          target: 'denied',
          actions: [
            { type: 'record', params: ({ context }) => draftApprovalDecided(context, 'unavailable', 'error') },
            assign({ reason: ({ event }) => `approval unavailable: ${String(event.error)}` }),
          ],
        },
      },
      on: {
        'tool.cancel.requested': {
          target: 'abortedBeforeDispatch',
          actions: { type: 'record', params: ({ context }) => draftApprovalDecided(context, 'cancelled', 'cancel') },
        },
      },
    },
    ready: {
      description: 'Allowed; waits for the step to release it (calls run in order; read-only neighbours together).',
      entry: 'notifyReady',
      on: {
        // A read-only, idempotent call flushes nothing of its own whatever the store (ADR 0072): its dispatch is
        // logged in the transition that releases it, straight to the body (ADR 0091).
        'tool.call.released': [{ guard: 'isRepeatable', target: 'executing', actions: recordDispatch }, { target: 'dispatching' }],
        'tool.cancel.requested': 'abortedBeforeDispatch',
      },
    },
    dispatching: {
      description:
        'tool/dispatch is made durable before the tool body starts (two-phase dispatch): flushed, unless the log is durable on append or the call is read-only and idempotent (ADR 0072: running it twice changes nothing).',
      entry: recordDispatch,
      always: [{ guard: 'isLogDurable', target: 'executing' }, { target: 'flushingDispatch' }],
    },
    flushingDispatch: {
      invoke: { src: 'flushLog', onDone: 'executing', onError: { target: 'notDurable', actions: 'markUnsaved' } },
      on: { 'tool.cancel.requested': 'aborted' },
    },
    notDurable: {
      description: 'The dispatch could not be made durable, so the tool does not run: after a crash, repair must never call a run tool "not started".',
      entry: {
        type: 'record',
        params: ({ context }) => draftResult(context, 'error', 'Not run: the session log could not be made durable before dispatch.', ToolResultCode.DISPATCH_NOT_DURABLE),
      },
      always: 'settling',
    },
    executing: {
      invoke: {
        src: 'executeTool',
        input: ({ context }) => context,
        // A read-only, idempotent call's result rides the next flush (ADR 0072): it is done in the transition that
        // brings the result (ADR 0091); any other call asks the store in `settling`.
        onDone: [
          { guard: 'isRepeatable', target: 'done', actions: { type: 'record', params: ({ context, event }) => draftResult(context, event.output.status, event.output.content, event.output.code) } },
          { target: 'settling', actions: { type: 'record', params: ({ context, event }) => draftResult(context, event.output.status, event.output.content, event.output.code) } },
        ],
        onError: [
          { guard: 'isRepeatable', target: 'done', actions: { type: 'record', params: ({ context, event }) => draftResult(context, 'error', `tool failed: ${String(event.error)}`, ToolResultCode.TOOL_ERROR) } },
          { target: 'settling', actions: { type: 'record', params: ({ context, event }) => draftResult(context, 'error', `tool failed: ${String(event.error)}`, ToolResultCode.TOOL_ERROR) } },
        ],
      },
      on: { 'tool.cancel.requested': 'aborted' },
    },
    rejected: {
      description: 'Only ever entered as the call is created, before its entry actions have run: its result is always flushed, since whether the log is durable cannot be asked before the result is in it.',
      entry: {
        type: 'record',
        params: ({ context }) => {
          const v = context.validation;
          const code = v && !v.ok ? v.code : ToolResultCode.INVALID_CALL;
          return draftResult(context, 'rejected', `Rejected before dispatch (${code}): ${v && !v.ok ? v.message : 'invalid call'}`, code);
        },
      },
      always: 'flushingResult',
    },
    denied: {
      entry: {
        type: 'record',
        params: ({ context }) => draftResult(context, 'denied', `Denied: ${context.reason ?? 'not allowed'}. The call did not run.`, 'DENIED', context.reason ?? 'not allowed'),
      },
      always: 'settling',
    },
    abortedBeforeDispatch: {
      entry: {
        type: 'record',
        params: ({ context }) => draftResult(context, 'aborted', 'Cancelled before it was dispatched; the call did not run.', ToolResultCode.ABORTED_BEFORE_DISPATCH),
      },
      always: 'settling',
    },
    aborted: {
      entry: {
        type: 'record',
        params: ({ context }) => draftResult(context, 'aborted', 'Cancelled while running; it may have had part of its effect.', 'ABORTED'),
      },
      always: 'settling',
    },
    settling: {
      description:
        'tool/result is made durable before the step hears of it: flushed, unless the log is durable on append or the call is read-only and idempotent (ADR 0072: its result rides the next flush something else needs).',
      always: [{ guard: 'isLogDurable', target: 'done' }, { guard: 'isRepeatable', target: 'done' }, { target: 'flushingResult' }],
    },
    flushingResult: {
      description: 'A result that cannot be made durable still says what the tool did; the call reports the failure so the step stops.',
      invoke: { src: 'flushLog', onDone: 'done', onError: { target: 'done', actions: 'markUnsaved' } },
    },
    done: { type: 'final', description: 'The parent hears of it through the done event, which carries the callId.' },
  },
});
