/**
 * The subagents seam's port. One service, the registry (`subagents`), holds
 * the providers a session's rows mounted (`subagent:spawn`, `subagent:fork`,
 * `subagent:process`, `subagent:mock-remote`, …), each chosen by name per
 * delegation. The registry checks a request against its limits and against
 * what the chosen provider advertises before any child exists; the provider
 * then creates the child, which the parent drives through `ChildSession`
 * whatever the provider — the same call site for every one of them.
 */
import { codes } from '../log/codes.js';
import type { BudgetLimit } from '../log/entries-budget.js';
import type { Entry } from '../log/entries.js';
import type { TurnEndReason } from '../log/entry-values.js';
import type { ToolDefinition } from './tools.js';

export type Disposer = () => void;

/** How a child's one turn ended, as its parent hears it. */
export interface ChildOutcome {
  reason: TurnEndReason;
  code?: string;
  cause?: string;
}

/** A child session as its parent drives it, in process or over a protocol. */
export interface ChildSession {
  readonly id: string;
  /** Where its log lives, for people. */
  readonly location: string;
  /** Its log so far (over a protocol: every entry the child has made durable). */
  entries(): readonly Entry[];
  /** Logged in the child's log before it resolves (ADR 0021). */
  send(text: string, mode: 'followup' | 'steer' | 'inject'): Promise<void>;
  /** Contract: resolves with how the turn ended; rejects only when the child itself is gone (crashed, its process died). */
  run(text: string): Promise<ChildOutcome>;
  /** Contract: the running turn ends `aborted`; resolves once the child is idle again (or gone). */
  cancel(cause: string): Promise<unknown>;
  /** Contract: idempotent; flushes and closes the child's log. */
  close(): Promise<void>;
}

/** A steps-and-tokens budget drawn by every child of a delegation tree (`--tree-budget`). */
export interface TreeBudget {
  readonly limit: { steps?: number; tokens?: number };
  readonly used: { steps: number; tokens: number };
  /** Counts a child's entry (a `step/start` is a step, an `assistant/message` its usage's tokens); returns the reason once exhausted. */
  draw(entry: Entry): string | undefined;
  /** Why nothing more may be drawn (`steps 50/50 used`), or undefined while there is budget left. */
  exhausted(): string | undefined;
  /** Called once, when the budget runs out; the disposer stops listening. */
  onExhausted(listener: (why: string) => void): Disposer;
}

/** What a delegation asks for, before any child exists. */
export interface DelegationRequest {
  /** A provider's name (`spawn`, `fork`, `process`, `mock-remote`, …). */
  provider: string;
  /** The child's depth: its parent's + 1 (the root session is depth 0). */
  depth: number;
  /** Tools the child should see, at most (intersected with what it would get); undefined: all of them. */
  tools?: readonly string[];
}

/** What a provider says it can do; the registry refuses a request outside it before the provider is asked. */
export interface Advertised {
  /** The deepest child depth it can run; undefined: no limit of its own. */
  maxDepth?: number;
  /** The tools its children can be offered; undefined: those of the parent's own product. */
  tools?: readonly string[];
  /** False: it cannot narrow a child's tools at all (a child of its own product), so any tool filter is refused. */
  filters?: boolean;
}

/**
 * The model a child runs on, when not its parent's (ADR 0066): a model id as the `model` setting takes it
 * (`gpt-4o-mini`, `scripted:<file>`: the parent's wire kept), or the child's whole `model` row (`{ use, config }`).
 */
export type ChildModel = string | { use: string; config?: unknown };

/** What a provider needs to create one child. */
export interface ChildRequest {
  /** The child session's id: a name beside its parent's log (`<parent>.<callId>`). */
  id: string;
  depth: number;
  /** The parent session's id, recorded in the child's `session/start`. */
  parent: string;
  /** Tools the child sees, at most (`restrict()` by intersection); scoped tools are never hidden. */
  tools?: readonly string[];
  /** Tools only this child has (the one it answers through, e.g. Ralph's `handoff`). */
  scoped?: readonly ToolDefinition[];
  /** The parent's log, for a provider that seeds its child with the completed turns (`fork`). */
  parentEntries(): readonly Entry[];
  /** Aborted when the parent stops waiting before the child exists; a child created anyway must be closed. */
  signal: AbortSignal;
  /** The W3C trace context the child's spans hang under (the parent's call span), for its `session/start` (ADR 0055). */
  traceparent?: string;
  /** The model the delegating tool's row names for its children; a provider's own row may name another. Absent: the parent's. */
  model?: ChildModel;
  /**
   * What is left of the parent's own spending cap (ADR 0047), for a provider whose child does not fold it from
   * the parent (`process`: it crosses as `--budget`, so the child's `session/start` records the prices its spend is counted at).
   */
  budget?: BudgetLimit;
}

/** One provider of the subagents seam. */
export interface SubagentProvider {
  readonly name: string;
  readonly advertised: Advertised;
  /** Contract: creates the child with its own log, depth and parent in its `session/start`, approval `never` (I10); rejects when it cannot. */
  open(request: ChildRequest): Promise<ChildSession>;
}

/** The registry's verdict on a request, before any child exists. */
/** Why the registry refused a delegation before any child was created (a refused `Admission`'s code). */
export const AdmissionCode = codes({
  SUBAGENT_PROVIDER_UNKNOWN: 'No subagent provider has that name in this session.',
  DEPTH_LIMIT: 'The delegation would go deeper than `--max-depth`, or than its provider can.',
  TOOL_FILTER_UNSUPPORTED: 'The provider cannot narrow or offer the tools asked for.',
  TREE_BUDGET_EXHAUSTED: 'The delegation tree\'s budget is spent (the same code as `SubagentCode`\'s).',
});

export type Admission = { ok: true; provider: SubagentProvider } | { ok: false; code: string; message: string };

/** The `subagents` service: the providers by name, the depth limit, the tree's budget. */
export interface Subagents {
  /** The deepest child depth allowed (`--max-depth`); 0: no delegation. */
  readonly maxDepth: number;
  /** The budget every child of the tree draws from, when one was set. */
  readonly budget?: TreeBudget;
  /** Contract: throws naming both owners when the name is taken; the disposer is idempotent. */
  register(provider: SubagentProvider, owner: string): Disposer;
  /** The providers' names, in registration order. */
  names(): readonly string[];
  /**
   * Contract: pure given the registry's state; refuses an unknown provider
   * (`SUBAGENT_PROVIDER_UNKNOWN`), a depth over the limit or over what the
   * provider advertises (`DEPTH_LIMIT`), a tool filter naming tools the
   * provider cannot offer (`TOOL_FILTER_UNSUPPORTED`), and any request once
   * the tree's budget is spent (`TREE_BUDGET_EXHAUSTED`).
   */
  admit(request: DelegationRequest, offered: readonly string[]): Admission;
  /** Tracks a child's teardown (a cancel still reaching it), so the session's close waits for it. */
  track(teardown: Promise<unknown>): void;
  /** Contract: resolves when every tracked teardown has settled; never rejects. */
  drain(): Promise<void>;
}
