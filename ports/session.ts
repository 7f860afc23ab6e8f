/** The `session` service: what a plugin may know of and do to the session it is mounted in. */
import type { Draft, Entry } from '../log/entries.js';

export interface SessionControl {
  readonly id: string;
  /** 0 for a root session; a subagent's is its parent's + 1. */
  readonly depth: number;
  /** The workspace, absolute and real. */
  readonly cwd: string;
  /** `$BRIDLE_HOME`, where logs and config live; never inside the model's reach. */
  readonly bridleHome: string;
  /** Queues context for the model's next step (the session's `inject` path); it does not wake an idle session. */
  inject(text: string): void;
  /** The session's log so far. */
  entries(): readonly Entry[];
  /** Appends to the session's log (the `delegate` tool brackets its child with `subagent/start` and `subagent/end`). */
  record(draft: Draft): void;
}
