/**
 * A session: admits input, runs one turn at a time, and owns the inbox, the
 * cancel and the wake latch. Between turns it holds no running actor, so its
 * persisted snapshot there is a faithful checkpoint.
 */
import { assign, enqueueActions, setup } from 'xstate';
import type { RetryPolicy } from './retry-policy.js';
import { turnMachine, type TurnOutput } from './turn.machine.js';

export type InputMode = 'followup' | 'steer' | 'inject';

export interface SessionInput {
  maxSteps?: number;
  retry?: RetryPolicy;
  /** Turns already in the log, when a session is resumed without a checkpoint. */
  turns?: number;
}

export interface SessionContext {
  maxSteps: number;
  retry?: RetryPolicy;
  turns: number;
  /** Input waiting for a turn of its own, in arrival order. */
  followups: string[];
  /** Context waiting for the next step, whichever turn it belongs to. */
  injects: string[];
  /** What the running turn claimed: its input and the injected context it starts with. */
  claimed?: { input: string; injects: string[] };
  last?: TurnOutput;
}

export type SessionEvent =
  | { type: 'session.input.received'; text: string; mode: InputMode }
  | { type: 'session.cancel.requested'; cause?: string }
  | { type: 'session.wake.requested' }
  | { type: 'session.close.requested' };

export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    input: {} as SessionInput,
    events: {} as SessionEvent,
  },
  actors: { turn: turnMachine },
  actions: {
    queueFollowup: assign({ followups: ({ context, event }) => (event.type === 'session.input.received' ? [...context.followups, event.text] : context.followups) }),
    queueInject: assign({ injects: ({ context, event }) => (event.type === 'session.input.received' ? [...context.injects, event.text] : context.injects) }),
    forwardInput: enqueueActions(({ event, enqueue }) => {
      if (event.type !== 'session.input.received') return;
      enqueue.sendTo('turn', event.mode === 'steer' ? { type: 'turn.input.steered', text: event.text } : { type: 'turn.input.injected', text: event.text });
    }),
    forwardCancel: enqueueActions(({ event, enqueue }) => {
      enqueue.sendTo('turn', { type: 'turn.cancel.requested', cause: event.type === 'session.cancel.requested' ? event.cause : undefined });
    }),
    claimInput: assign(({ context }) => ({
      turns: context.turns + 1,
      claimed: { input: context.followups[0] ?? '', injects: context.injects },
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
    maxSteps: input.maxSteps ?? 100,
    retry: input.retry,
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
        'session.close.requested': 'closed',
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
          maxSteps: context.maxSteps,
          retry: context.retry,
        }),
        onDone: { target: 'idle', actions: ['settleTurn', assign({ claimed: undefined })] },
      },
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
    closed: { type: 'final' },
  },
});
