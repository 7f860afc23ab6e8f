/**
 * Where a session is in its life, shared by the parts of its wiring: not yet
 * started, being ended, crashed, closing. One object, so each part reads the
 * same answer the others wrote.
 */
import type { SessionCrashedError } from '../session-fault.js';

export interface Lifecycle {
  /** `start()` ran: the actor is live and the log has its opening. */
  started: boolean;
  /** `end()` began: nothing more starts; input stays queued in the log, for a resume. */
  ending: boolean;
  crashed?: SessionCrashedError;
  closing?: Promise<void>;
}

/** Input or a request sent to a session that was created and not started (code `SESSION_NOT_STARTED`). */
export class SessionNotStartedError extends Error {
  readonly code = 'SESSION_NOT_STARTED';
  constructor() {
    super('the session is not started: subscribe to it, then call start()');
    this.name = 'SessionNotStartedError';
  }
}
