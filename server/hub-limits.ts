/**
 * What a hub is set up with: its limits (how many sessions, how long one may
 * sit idle, where a client may point one) and the store's hands it is given
 * (reopen, relay, fork, adopt, usage), with the defaults `bridle serve` and
 * `startServer()` share.
 */
import type { RelaySource } from '../ports/relay.js';
import type { HostedSession, ReopenSession } from './hosted-session.js';
import { ErrorCode, refusal, Reason, type ParamsOf, type RpcFailure } from './protocol.js';
import type { UsageOf } from './usage.js';

/**
 * Writes a fork of a session's log (`forkSession` over the server's store) and says what it wrote. Contract:
 * throws `ForkRefusedError` for a fork that cannot be made as asked; writes nothing then.
 */
export type ForkLog = (p: ParamsOf<'session/fork'>) => Promise<{
  id: string;
  forkOf: { session: string; seq: number };
  open: boolean;
  /** The open turn goes on as the fork is opened (a re-answered approval whose step ran nothing else, ADR 0031). */
  resumable?: boolean;
}>;

export interface HubLimits {
  /** Most sessions open at once, those being opened or ended included. */
  maxSessions: number;
  /** A session with no attached client and no running turn is ended after this long; 0: never. */
  idleTimeoutMs: number;
  /** Resolved roots (`allowedRoots`) a client's `cwd` must lie in; empty: a client may not choose one. */
  cwdRoots: readonly string[];
  /**
   * Opens a session of the server's store that this process does not hold (a predecessor's, or one closed
   * here), for `session/attach` and `session/input`; absent: only sessions created here are served.
   */
  reopen?: ReopenSession;
  /**
   * For a session another live worker holds (`reopen` refused it `SESSION_LOCKED`): the store's side of a relay
   * (ADR 0030); undefined when the store cannot relay (JSONL: the refusal stands).
   */
  relay?: (sessionId: string) => Promise<RelaySource | undefined>;
  /** Runs for every session this server comes to run (created or opened); what it returns runs when the session stops here. The owner's inbox pump. */
  adopt?: (session: HostedSession) => () => void;
  /** What a session's tree has cost so far (`session/cost`); absent: the server prices nothing. */
  usage?: UsageOf;
}

export const DEFAULT_MAX_SESSIONS = 64;
export const DEFAULT_IDLE_TIMEOUT_MS = 15 * 60 * 1000;

export const DEFAULT_LIMITS: HubLimits = { maxSessions: DEFAULT_MAX_SESSIONS, idleTimeoutMs: DEFAULT_IDLE_TIMEOUT_MS, cwdRoots: [] };

/** The refusal of a session past `maxSessions`. */
export function atLimit(maxSessions: number): RpcFailure {
  return refusal(ErrorCode.SessionLimit, Reason.SESSION_LIMIT, `this server holds its limit of ${maxSessions} sessions: close one (session/close) or wait for an idle one to be released`);
}
