/**
 * The agent loop as a row (course ch. 11, ADR 0077): what turns a session's seams into the machine it runs.
 * The base bundle's `loop:agent` row provides bridle's own — the session, turn, step, tool-call and
 * compaction machines as `provideMachines` gives them every seam. A patch replaces the row by id with a
 * module that provides another loop; it builds on the built-in one, which the host offers to every row as
 * the `machines` service: `refine` changes a machine after bridle has provided it (a guard, an action, a
 * delay), so a different step policy is a `.provide()` away, with no fork of bridle's code.
 */
import { z } from 'zod';
import type { Recorder } from '../log/recorder.js';
import type { Plugin } from '../plugins/host.js';
import { serviceKey } from '../ports/service.js';
import { provideMachines, type LoopRefinements, type MachineSeams, type ProvidedMachines } from './provide-machines.js';

/** A loop: the session's machine from its seams. */
export interface AgentLoop {
  readonly name: string;
  /** Contract: appends nothing and starts nothing; the returned machine writes through `recorder` once run. */
  provide(seams: MachineSeams, recorder: Recorder): ProvidedMachines;
  /** This loop with its machines changed so (after any change it already makes). */
  refine(refinements: LoopRefinements, name?: string): AgentLoop;
}

/** The loop the `loop:agent` row puts into the session (the wiring runs it). */
export const AGENT_LOOP = serviceKey<AgentLoop>('agent-loop');
/** bridle's own loop, offered to every row: what a replacement of `loop:agent` builds on. */
export const MACHINES = serviceKey<AgentLoop>('machines');

const then = <M>(a: ((m: M) => M) | undefined, b: ((m: M) => M) | undefined): ((m: M) => M) | undefined => (a && b ? (m) => b(a(m)) : (a ?? b));

function loopOf(name: string, own: LoopRefinements): AgentLoop {
  return {
    name,
    provide: (seams, recorder) => provideMachines(seams, recorder, own),
    refine: (r, next = `${name}+refined`) =>
      loopOf(next, {
        ...pick('session', then(own.session, r.session)),
        ...pick('turn', then(own.turn, r.turn)),
        ...pick('step', then(own.step, r.step)),
        ...pick('toolCall', then(own.toolCall, r.toolCall)),
        ...pick('compaction', then(own.compaction, r.compaction)),
      }),
  };
}
const pick = <K extends keyof LoopRefinements>(k: K, f: LoopRefinements[K]): Partial<LoopRefinements> => (f ? { [k]: f } : {});

/** bridle's own loop: the machines as `provideMachines` provides them, unchanged. */
export const builtinLoop: AgentLoop = loopOf('machines', {});

/** The `loop:agent` row (`use: machines`): puts bridle's own loop into the session. */
export const agentLoopPlugin: Plugin = {
  name: 'loop-machines',
  inject: [MACHINES],
  provides: [AGENT_LOOP],
  config: z.strictObject({}),
  apply: (ctx) => void ctx.provide(AGENT_LOOP, ctx.get(MACHINES)),
};

/** Contract: true for what a session can run as its loop (a row's module may provide anything). */
export const isAgentLoop = (v: unknown): v is AgentLoop => typeof (v as AgentLoop | null | undefined)?.provide === 'function';
