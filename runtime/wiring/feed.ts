/**
 * The one channel a host watches a session through (ADR 0051): what the log
 * gained, what became durable, the live text, the machines' state, the crash
 * and the close — one union, one `subscribe`. A session is created without
 * running (`createSession`), so a host subscribes first and then `start`s it,
 * and sees everything from `session/start` on.
 *
 * Answering an approval is not here: a question needs an answer back, which a
 * feed cannot give, so it stays the `answerer` option; the question and its
 * decision reach the feed as the `approval/asked` and `approval/decided` entries.
 */
import type { SnapshotFrom } from 'xstate';
import type { Chunk } from '../../log/chunks.js';
import type { Entry } from '../../log/entries.js';
import type { sessionMachine } from '../../machines/session.machine.js';
import type { SessionCrashedError } from '../session-fault.js';

export type SessionFeedEvent =
  /** Appended to the log, in log order; not yet durable (a display shows it now). */
  | { type: 'entry.appended'; entry: Entry }
  /** Now durable in the store: what a client that must never see a lost entry takes. */
  | { type: 'entry.saved'; entry: Entry }
  /** Live model output for display, never logged (the entries say what was streamed). */
  | { type: 'chunk.streamed'; chunk: Chunk; step: string }
  /** A running call's progress (an MCP server's `notifications/progress`): ephemeral, never logged (ADR 0065). */
  | { type: 'tool.progress'; callId: string; name: string; progress: number; total?: number; message?: string }
  /** An actor of the session's tree changed its state; `snapshot` is the session machine's, as it is now. */
  | { type: 'state.changed'; snapshot: SnapshotFrom<typeof sessionMachine> }
  /** The session machine failed: it takes no more input (`SESSION_CRASHED`). */
  | { type: 'session.crashed'; error: SessionCrashedError }
  /** The log is flushed and closed; nothing more comes. */
  | { type: 'session.closed' };

export type SessionFeedListener = (event: SessionFeedEvent) => void;

/** The listeners of one session. Contract: `emit` never throws; a listener's throw reaches neither the session nor the other listeners. */
export class SessionFeed {
  private readonly listeners = new Set<SessionFeedListener>();
  private watch?: { attach: () => () => void; detach?: () => void };

  subscribe(listener: SessionFeedListener): () => void {
    // A listener subscribed twice is two subscriptions: each unsubscribe removes its own.
    const own: SessionFeedListener = (e) => listener(e);
    this.listeners.add(own);
    if (this.watch && !this.watch.detach) this.watch.detach = this.watch.attach();
    return () => {
      this.listeners.delete(own);
      if (this.listeners.size === 0 && this.watch?.detach) (this.watch.detach(), (this.watch.detach = undefined));
    };
  }

  /**
   * `attach` runs while anyone watches: when the first listener subscribes (at once, if one has), and the function it
   * returns when the last one leaves. What only feeds the listeners costs nothing while there are none (#26).
   */
  whileWatched(attach: () => () => void): void {
    this.watch = { attach };
    if (this.watched) this.watch.detach = attach();
  }

  get watched(): boolean {
    return this.listeners.size > 0;
  }

  emit(event: SessionFeedEvent): void {
    if (this.listeners.size === 0) return;
    for (const l of [...this.listeners]) {
      // One unsubscribed by an earlier listener of this same event gets no more, this one included.
      if (!this.listeners.has(l)) continue;
      try {
        l(event);
      } catch {
        // Listeners run inside the actors' processing and the log's append: a throw there would crash the session.
      }
    }
  }
}
