/**
 * What a caller holds of a session (`createSession`'s result): subscribe to
 * its feed, start it, send input, cancel, wait for idle, compact, end, close,
 * and the registries its plugins reach. `wireSession` (runtime/wiring.ts)
 * builds it, not started (ADR 0051).
 */
import type { Actor } from 'xstate';
import type { Origin } from '../log/entry-values.js';
import type { Recorder } from '../log/recorder.js';
import type { CompactionOutput } from '../machines/compaction.machine.js';
import type { InputMode } from '../log/entries-inputs.js';
import type { sessionMachine } from '../machines/session.machine.js';
import type { TurnOutput } from '../machines/turn.machine.js';
import type { HookRegistry } from '../plugins/hooks/registry.js';
import type { Host } from '../plugins/host.js';
import type { ContextMeter } from './context/meter.js';
import type { PromptRegistry } from './prompt/registry.js';
import type { SessionFeedListener } from './wiring/feed.js';

export interface BridleSession {
  readonly id: string;
  /** The host the session's rows are mounted on: its services by key (`session.host.get(MODEL)`). */
  readonly host: Host;
  readonly recorder: Recorder;
  readonly actor: Actor<typeof sessionMachine>;
  /** Hooks and guards around every call and turn (plugins register through their rows; this is the registry itself). */
  readonly hooks: HookRegistry;
  /**
   * Hands `listener` every event of the session from now on (`SessionFeedEvent`: entries appended and saved, live
   * chunks, state changes, the crash, the close); returns the unsubscribe. Subscribed before `start`, it sees
   * `session/start` (or a continued log's opening) and everything after. Contract: a listener's throw reaches
   * neither the session nor the other listeners.
   */
  subscribe(listener: SessionFeedListener): () => void;
  /**
   * Begins the session: appends its opening (`session/start` for a new log), starts the actors, and hands a continued
   * log's queued input over (ADR 0021). Returns the session itself; a second call does nothing. Throws what the store
   * throws for that first append (`LogAppendError`), after closing the log; `SessionClosedError` once closed. Until it
   * runs, `send`, `run`, `idle`, `cancel` and `compact` reject with `SessionNotStartedError` (`SESSION_NOT_STARTED`).
   */
  start(): BridleSession;
  /**
   * Queue input: `followup` runs as its own turn, `steer` joins the running turn's next step, `inject` rides along without waking.
   * The input is logged (`session/input`) and handed to the session at once; the promise resolves with its seq once
   * the log holds it durably — only then is it received (ADR 0021). Rejects with `LogNotDurableError` when that
   * save fails, with `LogAppendError` when the store refused the entry (then the session never saw it), and with
   * `SessionCrashedError` (code `SESSION_CRASHED`) once the session has crashed.
   */
  send(text: string, mode?: InputMode, origin?: Origin): Promise<number>;
  /** Cancels the running turn or compaction (logged as `session/cancel` with `by`); resolves when the session is idle again. */
  cancel(by?: string): Promise<TurnOutput | undefined>;
  /** Resolves when no turn runs and none is queued, with the last turn's outcome. */
  idle(): Promise<TurnOutput | undefined>;
  /**
   * `send(text)` then `idle()`; `origin` marks harness input (a resume note) so the model never takes it for the user's words.
   * Rejects with `SessionCrashedError` when the session has crashed, before or while the turn runs.
   */
  run(text: string, origin?: Origin): Promise<TurnOutput>;
  /**
   * Compacts the context now when idle, else right after the running turn
   * (logged as `session/compact` with `by`); input arriving meanwhile is
   * queued. Resolves with the outcome (undefined if the compaction could not start).
   */
  compact(by?: string): Promise<CompactionOutput | undefined>;
  /** The system prompt's sections: plugins add theirs here. */
  readonly prompt: PromptRegistry;
  /** How big the next request is, against the model's window. */
  readonly meter: ContextMeter;
  /** Stops the actors, flushes, closes the store. Rejects with `LogNotDurableError` when that last flush fails; the store is closed either way. */
  close(): Promise<void>;
  /**
   * Resolves once every plugin that starts asynchronously (an MCP server) has
   * started or failed; input sent before then waits (it is logged, and
   * acknowledged, once the session takes it), so the first turn sees every
   * tool those plugins register. Contract: never rejects.
   */
  ready(): Promise<void>;
  /**
   * Ends the session at rest (logged as `session/end` with `by`): cancels the
   * running turn (it ends `aborted`) or compaction, starts nothing queued
   * (queued input stays in the log, for a resume), then closes as `close`
   * does — unless `keepOpen` (replay ends a session as its log says, and
   * closes it itself). Contract: the log ends with every turn ended;
   * resolves once it is flushed and the store is closed.
   */
  end(by?: string, o?: { keepOpen?: boolean }): Promise<void>;
}

/** Input sent to a session that was closed (code `SESSION_CLOSED`): nothing would ever take it. */
export class SessionClosedError extends Error {
  readonly code = 'SESSION_CLOSED';
  constructor() {
    super('the session is closed: input sent to it would never run');
    this.name = 'SessionClosedError';
  }
}
