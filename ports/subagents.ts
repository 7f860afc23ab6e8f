/** The `subagents` service's port: children of the session it belongs to (the `delegate` tool asks for them). */
import type { Entry, TurnEndReason } from '../log/entries.js';

/** A child session as its parent drives it. */
export interface ChildSession {
  readonly id: string;
  /** Where its log lives, for people. */
  readonly location: string;
  /** Its log so far. */
  entries(): readonly Entry[];
  /** Logged in the child's log before it resolves (ADR 0021). */
  send(text: string, mode: 'followup' | 'steer' | 'inject'): Promise<void>;
  run(text: string): Promise<{ reason: TurnEndReason; code?: string }>;
  cancel(cause: string): Promise<unknown>;
  close(): Promise<void>;
}

export interface Subagents {
  /** Contract: a child of this session with its own log, at `depth`, under approval `never` whatever the parent's (I10); the rest of the product as the parent's. */
  spawn(request: { id: string; depth: number }): ChildSession;
}
