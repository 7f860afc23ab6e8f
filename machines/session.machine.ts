/**
 * A session: admits input, runs one turn at a time, and owns the inbox, the
 * cancel and the wake latch. Between turns it holds no running actor, so its
 * persisted snapshot there is a faithful checkpoint.
 */
import { assign, enqueueActions, setup } from 'xstate';
import { notProvided } from './not-provided.js';
import type { Origin } from '../log/entries.js';
import { compactionMachine, type CompactionOutput } from './compaction.machine.js';
import { turnMachine, type TurnOutput } from './turn.machine.js';
import { DEFAULT_MAX_STEPS } from '../ports/loop.js';

export type InputMode = 'followup' | 'steer' | 'inject';
/** A queued followup: plain text is the user's; the object form carries another origin (a resume note). */
export type Followup = string | { text: string; origin: Origin };
const followupText = (f: Followup | undefined) => (typeof f === 'object' ? f.text : (f ?? ''));

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
  injects: string[];
  /** What the running turn claimed: its input and the injected context it starts with. */
  claimed?: { input: string; injects: string[]; origin?: Origin };
  last?: TurnOutput;
  /** `/compact` asked while a turn ran: it runs between turns, right after this one. */
  compactPending?: boolean;
  /** Manual compactions finished, and the newest one's outcome (for whoever asked). */
  compactions?: number;
  lastCompaction?: CompactionOutput;
}

export type SessionEvent =
  | { type: 'session.input.received'; text: string; mode: InputMode; origin?: Origin }
  | { type: 'session.cancel.requested'; cause?: string }
  | { type: 'session.wake.requested' }
  | { type: 'session.compact.requested' }
  | { type: 'session.close.requested' };

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
    /** Provided by the host: stops what the crashed turn left running, closes it in the log (`turn/end` error with a code), flushes, and answers with its output. */
    closeFaultedTurn: notProvided<TurnOutput, { turn: string; error: unknown }>('closeFaultedTurn'),
  },
  actions: {
    queueFollowup: assign({
      followups: ({ context, event }) =>
        event.type !== 'session.input.received' ? context.followups : [...context.followups, event.origin && event.origin !== 'user' ? { text: event.text, origin: event.origin } : event.text],
    }),
    queueInject: assign({ injects: ({ context, event }) => (event.type === 'session.input.received' ? [...context.injects, event.text] : context.injects) }),
    forwardInput: enqueueActions(({ event, enqueue }) => {
      if (event.type !== 'session.input.received') return;
      enqueue.sendTo('turn', event.mode === 'steer' ? { type: 'turn.input.steered', text: event.text } : { type: 'turn.input.injected', text: event.text });
    }),
    forwardCancelToCompaction: enqueueActions(({ enqueue }) => enqueue.sendTo('compaction', { type: 'compaction.cancel.requested' })),
    forwardCancel: enqueueActions(({ event, enqueue }) => {
      enqueue.sendTo('turn', { type: 'turn.cancel.requested', cause: event.type === 'session.cancel.requested' ? event.cause : undefined });
    }),
    claimInput: assign(({ context }) => ({
      turns: context.turns + 1,
      claimed: {
        input: followupText(context.followups[0]),
        injects: context.injects,
        ...(typeof context.followups[0] === 'object' ? { origin: context.followups[0].origin } : {}),
      },
      followups: context.followups.slice(1),
      injects: [],
    })),
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
          turn: `t${context.turns}`,
          input: context.claimed?.input ?? '',
          injected: context.claimed?.injects ?? [],
          origin: context.claimed?.origin,
          maxSteps: context.maxSteps,
        }),
        onDone: { target: 'idle', actions: ['settleTurn', assign({ claimed: undefined })] },
        onError: 'faulted',
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
        input: ({ context, event }) => ({ turn: `t${context.turns}`, error: (event as { error?: unknown }).error }),
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
