/** The `session` service: what a plugin may know of and do to the session it is mounted in. */
import type { Chunk } from '../log/chunks.js';
import type { Draft, Entry } from '../log/entries.js';
import type { ChildModel, ChildSession, TreeBudget } from './subagents.js';
import type { ToolDefinition } from './tools.js';

/** A child of this session's own product, as an in-process subagent provider asks for one. */
export interface ChildSpec {
  /** A name beside the parent's log: `<parent>.<callId>`. */
  id: string;
  /** Its parent's depth + 1, recorded in its `session/start`. */
  depth: number;
  /** The tools it sees, at most (`restrict()`: the intersection with its product's); undefined: all. */
  tools?: readonly string[];
  /** Tools only this child has, never hidden by `tools` (the one it answers through). */
  scoped?: readonly ToolDefinition[];
  /**
   * `never` for every child (I10), Ralph rounds included (ADR 0052): nothing
   * asks, nothing waits; what the snapshotted sandbox confines runs, the rest
   * is refused by name. It gets no allow rules.
   */
  approval: 'never';
  /** For a host that shows the child as it works (a Ralph round's transcript): its entries, its live chunks (not logged). */
  onEntry?: (entry: Entry) => void;
  onChunk?: (chunk: Chunk, step: string) => void;
  /** The trace context it is started under (the parent's call that started it), logged in its `session/start`. */
  traceparent?: string;
  /** Its own model instead of the parent's (ADR 0066): its `model` row, from its parent's, changed as this says. */
  model?: ChildModel;
}

export interface SessionControl {
  readonly id: string;
  /** 0 for a root session; a subagent's is its parent's + 1. */
  readonly depth: number;
  /** The workspace, absolute and real. */
  readonly cwd: string;
  /** `$BRIDLE_HOME`, where logs and config live; never inside the model's reach. */
  readonly bridleHome: string;
  /** The trace context its `session/start` logged, if any (ADR 0055). */
  readonly traceparent?: string;
  /** The budget this session's delegation tree draws from, when its parent handed one down. */
  readonly budget?: TreeBudget;
  /** Queues context for the model's next step (the session's `inject` path); it does not wake an idle session. */
  inject(text: string): void;
  /** The session's log so far. */
  entries(): readonly Entry[];
  /** Appends to the session's log (a delegation brackets its child with `subagent/start` and `subagent/end`). */
  record(draft: Draft): void;
  /**
   * Makes everything recorded so far durable (a delegation's `subagent/start` before its child's turn runs: a child
   * whose bracket a crash lost would be found by no repair). Contract: rejects with `LogNotDurableError` when the
   * log cannot be made durable. Optional: a session that records nothing (a preflight) has nothing to flush.
   */
  flush?(): Promise<void>;
  /**
   * Builds a child session of this session's own product (`createSession`
   * over the parent's composed rows, the tools service and plugins the
   * parent was given), with its own log beside the parent's,
   * the sandbox policy snapshotted from the parent's at this moment, and the
   * parent's model, store and clock. Contract: throws only when the product
   * cannot be built again (named in a `CompositionError`).
   */
  child(spec: ChildSpec): ChildSession;
}
