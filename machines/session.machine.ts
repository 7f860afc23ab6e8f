/**
 * A session: admits input, runs one turn at a time, and owns the inbox, the
 * cancel and the wake latch. Between turns it holds no running actor, so its
 * persisted snapshot there is a faithful checkpoint.
 */
import { assign, enqueueActions, setup } from 'xstate';
import { notProvided } from './not-provided.js';
import type { Origin } from '../log/entry-values.js';
import { nthTurn } from '../log/ids.js';
import { compactionMachine, type CompactionOutput } from './compaction.machine.js';
import { turnMachine, type TurnInput, type TurnOutput } from './turn.machine.js';
import { DEFAULT_MAX_STEPS } from '../ports/loop.js';
import type { InputMode } from '../log/entries-inputs.js';

import type { Queued } from './queued.js';
/** A queued followup: the input a turn of its own will start from. */
export type Followup = Queued;

export interface SessionInput {
  maxSteps?: number;
  /** Turns already in the log, when a session is resumed without a checkpoint. */
  turns?: number;
}

export interface SessionContext {
  maxSteps: number;
  turns: number;
  /** Input waiting for a turn of its own, in arrival order. */
  followups: Followup[];
  /** Context waiting for the next step, whichever turn it belongs to. */
  injects: Queued[];
  /** What the running turn claimed: its input and the injected context it starts with. */
  claimed?: { input: Queued; injects: Queued[] };
  last?: TurnOutput;
  /** `/compact` asked while a turn ran: it runs between turns, right after this one. */
  compactPending?: boolean;
  /** Manual compactions finished, and the newest one's outcome (for whoever asked). */
  compactions?: number;
  lastCompaction?: CompactionOutput;
  /** The running turn is one a process left waiting on an approval, gone on with (ADR 0027). */
  resuming?: NonNullable<TurnInput['resume']>;
  /** The turn goes on at its budget question (ADR 0047). */
  resumingBudget?: NonNullable<TurnInput['resumeBudget']>;
}

export type SessionEvent =
  /** Input the host has logged (`session/input` at `seq`) and now admits. */
  | { type: 'session.input.received'; seq: number; text: string; mode: InputMode; origin?: Origin }
  | { type: 'session.cancel.requested'; cause?: string }
  | { type: 'session.wake.requested' }
  | { type: 'session.compact.requested' }
  | { type: 'session.close.requested' }
  /**
   * Sent by the host first, before any queued input, when the log ends inside a turn that waits on an approval
   * (ADR 0027): that turn goes on, from its input (`seq`, `text`) and its open step.
   */
  | { type: 'session.turn.resumed'; seq: number; text: string; origin?: Origin; resume?: NonNullable<TurnInput['resume']>; resumeBudget?: NonNullable<TurnInput['resumeBudget']> };

const queued = (e: { seq: number; text: string; origin?: Origin }): Queued => (e.origin && e.origin !== 'user' ? { seq: e.seq, text: e.text, origin: e.origin } : { seq: e.seq, text: e.text });

export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    input: {} as SessionInput,
    events: {} as SessionEvent,
    children: {} as { turn: 'turn'; compaction: 'compaction'; closeFaultedTurn: 'closeFaultedTurn' },
  },
  actors: {
    turn: turnMachine,
    compaction: compactionMachine,
    /**
     * Provided by the host: stops what the crashed turn left running, closes it in the log (`turn/end` error with a code), flushes, and answers
     * with its output — the steer and inject it held as leftovers. `held`: the seqs of the input the session itself holds, and the turn's own.
     */
    closeFaultedTurn: notProvided<TurnOutput, { turn: string; error: unknown; held: number[] }>('closeFaultedTurn'),
  },
  actions: {
    queueFollowup: assign({
      followups: ({ context, event }) => (event.type !== 'session.input.received' ? context.followups : [...context.followups, queued(event)]),
    }),
    queueInject: assign({ injects: ({ context, event }) => (event.type === 'session.input.received' ? [...context.injects, { seq: event.seq, text: event.text }] : context.injects) }),
    forwardInput: enqueueActions(({ event, enqueue }) => {
      if (event.type !== 'session.input.received') return;
      const q = { seq: event.seq, text: event.text };
      enqueue.sendTo('turn', event.mode === 'steer' ? { type: 'turn.input.steered', ...q } : { type: 'turn.input.injected', ...q });
    }),
    forwardCancelToCompaction: enqueueActions(({ enqueue }) => enqueue.sendTo('compaction', { type: 'compaction.cancel.requested' })),
    forwardCancel: enqueueActions(({ event, enqueue }) => {
      enqueue.sendTo('turn', { type: 'turn.cancel.requested', cause: event.type === 'session.cancel.requested' ? event.cause : undefined });
    }),
    claimInput: assign(({ context }) => ({
      turns: context.turns + 1,
      // Only ever entered with a followup queued (the guards see to it).
      claimed: { input: context.followups[0]!, injects: context.injects },
      followups: context.followups.slice(1),
      injects: [],
    })),
    resumeTurn: assign(({ context, event }) =>
      event.type === 'session.turn.resumed' ? { followups: [queued(event), ...context.followups], resuming: event.resume, resumingBudget: event.resumeBudget } : {},
    ),
    settleTurn: assign({
      last: ({ event }) => (event as unknown as { output: TurnOutput }).output,
      // A steer the turn never took becomes the next turn's input; an inject waits for the next step.
      followups: ({ context, event }) => [...(event as unknown as { output: TurnOutput }).output.leftoverSteer, ...context.followups],
      injects: ({ context, event }) => [...(event as unknown as { output: TurnOutput }).output.leftoverInject, ...context.injects],
    }),
  },
  guards: {
    isInject: ({ event }) => event.type === 'session.input.received' && event.mode === 'inject',
    isSteer: ({ event }) => event.type === 'session.input.received' && event.mode === 'steer',
    hasFollowup: ({ context }) => context.followups.length > 0,
  },
}).createMachine({
  id: 'session',
  context: ({ input }) => ({
    maxSteps: input.maxSteps ?? DEFAULT_MAX_STEPS,
    turns: input.turns ?? 0,
    followups: [],
    injects: [],
  }),
  initial: 'idle',
  states: {
    idle: {
      description: 'No turn runs. Queued input waits for session.wake.requested, sent by the host after it has checkpointed.',
      on: {
        'session.input.received': [
          { guard: 'isInject', actions: 'queueInject' },
          { target: 'running', actions: 'queueFollowup' },
        ],
        'session.wake.requested': { guard: 'hasFollowup', target: 'running' },
        'session.turn.resumed': { target: 'running', actions: 'resumeTurn' },
        'session.compact.requested': { target: 'compacting', actions: assign({ compactPending: false }) },
        'session.close.requested': 'closed',
      },
    },
    compacting: {
      description: 'A manual compaction between turns. Input arriving meanwhile is queued and runs afterwards, once the host wakes the session.',
      invoke: {
        id: 'compaction',
        src: 'compaction',
        input: { trigger: 'manual' as const },
        onDone: { target: 'idle', actions: assign({ compactions: ({ context }) => (context.compactions ?? 0) + 1, lastCompaction: ({ event }) => event.output }) },
        onError: { target: 'idle', actions: assign({ compactions: ({ context }) => (context.compactions ?? 0) + 1 }) },
      },
      on: {
        'session.input.received': [{ guard: 'isInject', actions: 'queueInject' }, { actions: 'queueFollowup' }],
        'session.cancel.requested': { actions: 'forwardCancelToCompaction' },
      },
    },
    running: {
      entry: 'claimInput',
      invoke: {
        id: 'turn',
        src: 'turn',
        input: ({ context }) => ({
          turn: nthTurn(context.turns),
          input: context.claimed?.input.text ?? '',
          from: context.claimed?.input.seq,
          injected: context.claimed?.injects ?? [],
          origin: context.claimed?.input.origin,
          maxSteps: context.maxSteps,
          ...(context.resuming ? { resume: context.resuming } : {}),
          ...(context.resumingBudget ? { resumeBudget: context.resumingBudget } : {}),
        }),
        onDone: { target: 'idle', actions: ['settleTurn', assign({ claimed: undefined, resuming: undefined, resumingBudget: undefined })] },
        onError: { target: 'faulted', actions: assign({ resuming: undefined, resumingBudget: undefined }) },
      },
      on: { 'session.compact.requested': { actions: assign({ compactPending: true }) } },
      initial: 'active',
      states: {
        active: {
          on: {
            'session.input.received': [
              { guard: 'isInject', actions: 'forwardInput' },
              { guard: 'isSteer', actions: 'forwardInput' },
              { actions: 'queueFollowup' },
            ],
            'session.cancel.requested': { target: 'cancelling', actions: 'forwardCancel' },
          },
        },
        cancelling: {
          description: 'The wake latch: input arriving while the turn is torn down is queued and runs exactly once afterwards.',
          on: {
            'session.input.received': [{ guard: 'isInject', actions: 'queueInject' }, { actions: 'queueFollowup' }],
          },
        },
      },
    },
    faulted: {
      description: 'The turn crashed (a log append failed): the host closes it in the log as an error with a code, durable before anyone hears; input meanwhile is queued. If even that fails, the session crashes.',
      invoke: {
        id: 'closeFaultedTurn',
        src: 'closeFaultedTurn',
        input: ({ context, event }) => ({
          turn: nthTurn(context.turns),
          error: (event as { error?: unknown }).error,
          held: [...context.followups, ...context.injects, ...(context.claimed ? [context.claimed.input, ...context.claimed.injects] : [])].map((q) => q.seq),
        }),
        onDone: { target: 'idle', actions: ['settleTurn', assign({ claimed: undefined })] },
      },
      on: {
        'session.input.received': [{ guard: 'isInject', actions: 'queueInject' }, { actions: 'queueFollowup' }],
        'session.compact.requested': { actions: assign({ compactPending: true }) },
      },
    },
    closed: { type: 'final' },
  },
});
