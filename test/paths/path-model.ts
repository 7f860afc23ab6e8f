/**
 * A path model: what the graph generator needs to know about one machine
 * (payloads for its events, outputs for its actors' done events, how to keep
 * its graph finite) and what must hold on every path through it.
 */
import type { AnyEventObject, AnyMachineSnapshot } from 'xstate';
import type { Draft } from '../../log/entries.js';

/** A stand-in child actor the run created in place of a named actor slot. */
export interface FakeChild {
  src: string;
  id: string;
  input: unknown;
  /** How many path events had been sent when it was created. */
  born: number;
  /** Events the machine sent it, each with the run's clock (index into `PathRun.sent`). */
  received: { event: AnyEventObject; at: number }[];
}

/** A call of one of the machine's own effect actions (a plain-function action slot other than `record`), faked by the run. */
export interface EffectCall {
  action: string;
  params: unknown;
  /** How many path events had been sent when it was made. */
  at: number;
  /** How many drafts had been recorded before it: places it among the `record`s. */
  afterDrafts: number;
}

/** One generated path, run against the real machine. */
export interface PathRun {
  /** The input the machine was started with. */
  input: unknown;
  /** The path's events as delivered, init excluded. */
  sent: AnyEventObject[];
  /** The machine's snapshot just before each sent event. */
  before: AnyMachineSnapshot[];
  /** Every `record` the machine made, with how many path events had been sent when it was made. */
  drafts: { draft: Draft; at: number }[];
  children: FakeChild[];
  /** Every effect action the machine called (e.g. `prepareRequest`), in order; the path plays their answers as events. */
  effects: EffectCall[];
  /** Events the machine sent to its parent (`sendParent`). */
  toParent: { event: AnyEventObject; at: number }[];
  final: AnyMachineSnapshot;
  /** Whether the path ends in a final state. */
  done: boolean;
}

export interface PathModel {
  input?: unknown;
  /**
   * More inputs the machine starts from, each generated and run like a world of its own (a turn or step gone on
   * with after a restart, ADR 0027); the coverage is the union. Default: `input` alone.
   */
  inputs?: { name: string; input: unknown }[];
  /** Payload variants per event type; an event type absent here is sent bare. */
  payloads?: Record<string, AnyEventObject[]>;
  /**
   * Guards the host provides because they read the world (is the log durable already? is the next request over
   * the threshold?), as fixed answers: each entry is one world in which the machine is generated and run; the
   * coverage is the union over the worlds. Default: one world, the machine's own guards.
   */
  worlds?: Record<string, boolean>[];
  /**
   * Actions the host provides as an `assign` because they only compute (the call's validation, ADR 0033): each
   * entry is one more world, crossed with `worlds`, named by `name`. The path runner keeps them (they are not
   * effects to fake). Default: none.
   */
  assigns?: { name: string; actions: Record<string, unknown> }[];
  /** Output variants per actor slot; its invoke's done events carry each one. */
  outputs?: Record<string, unknown[]>;
  /** Concrete events for a descriptor the generic rules cannot fill (wildcards, payloads that depend on context). */
  events?: (snapshot: AnyMachineSnapshot, type: string) => AnyEventObject[] | undefined;
  /** The part of the context that matters, small enough that the graph stays finite. Default: none. */
  abstract?: (snapshot: AnyMachineSnapshot) => unknown;
  /**
   * `shortest`: one shortest path to every (state, incoming edge) of the
   * abstract graph, so every transition is on some path. `simple`: every
   * simple path (for small acyclic machines: all of them).
   */
  generator: 'shortest' | 'simple';
  /** The driver's duty before an event is sent, e.g. playing a child whose done event means "my result is durable". */
  beforeSend?: (run: PathRun, event: AnyEventObject) => void;
  /**
   * Runs after the path, outside coverage, on the live actor: for promises
   * that are about what happens next (the wake latch). Returns problems.
   */
  afterPath?: (send: (event: AnyEventObject) => AnyMachineSnapshot, run: PathRun) => string[];
  /** Problems found on this path; empty when every invariant holds. */
  check: (run: PathRun) => string[];
}

/** The newest child from `src` that existed when event number `n` (1-based) was sent. */
export const childAt = (run: PathRun, src: string, n: number): FakeChild | undefined => run.children.filter((c) => c.src === src && c.born < n).at(-1);

export const countKind = (run: PathRun, kind: Draft['kind']): number => run.drafts.filter((d) => d.draft.kind === kind).length;

export const draftsOf = <K extends Draft['kind']>(run: PathRun, kind: K) =>
  run.drafts.filter((d): d is { draft: Extract<Draft, { kind: K }>; at: number } => d.draft.kind === kind);
