/**
 * The sessions one server hosts, by id, and their limits: how many may be
 * open at once, where a client may point one (`cwd`), and how long one may
 * sit idle before it is released.
 */
import type { InspectionEvent, Observer } from 'xstate';
import { checkCwd } from './allowed-cwd.js';
import { ForkRefusedError } from '../runtime/fork.js';
import { HostedSession, type CreateParams, type OpenSession } from './hosted-session.js';
import { ErrorCode, refusal, RpcFailure, type ParamsOf, type ResultOf, type SessionSummary } from './protocol.js';

/**
 * Writes a fork of a session's log (`forkSession` over the server's store) and says what it wrote. Contract:
 * throws `ForkRefusedError` for a fork that cannot be made as asked; writes nothing then.
 */
export type ForkLog = (p: ParamsOf<'session/fork'>) => Promise<{ id: string; forkOf: { session: string; seq: number }; open: boolean }>;

export interface HubLimits {
  /** Most sessions open at once, those being opened or ended included. */
  maxSessions: number;
  /** A session with no attached client and no running turn is ended after this long; 0: never. */
  idleTimeoutMs: number;
  /** Resolved roots (`allowedRoots`) a client's `cwd` must lie in; empty: a client may not choose one. */
  cwdRoots: readonly string[];
}

export const DEFAULT_MAX_SESSIONS = 64;
export const DEFAULT_IDLE_TIMEOUT_MS = 15 * 60 * 1000;

const DEFAULT_LIMITS: HubLimits = { maxSessions: DEFAULT_MAX_SESSIONS, idleTimeoutMs: DEFAULT_IDLE_TIMEOUT_MS, cwdRoots: [] };

export class Hub {
  private readonly sessions = new Map<string, HostedSession>();
  private readonly ending = new Set<Promise<void>>();
  private opening = 0;
  private readonly limits: HubLimits;

  constructor(
    private readonly openSession: OpenSession,
    private readonly onProblem: (message: string) => void = () => undefined,
    private readonly inspect?: Observer<InspectionEvent>,
    limits: Partial<HubLimits> = {},
    private readonly forkLog?: ForkLog,
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
  }

  /** Sessions that hold a log open: hosted, being opened, or being ended. */
  get held(): number {
    return this.sessions.size + this.opening + this.ending.size;
  }

  /**
   * Contract: a refusal is an `RpcFailure` naming its reason (`data.reason`):
   * `SESSION_LIMIT`, a `CWD_*`, or whatever `open` refused with; any other
   * failure to open becomes `OPEN_FAILED` without its message (the server's
   * `onProblem` gets that), so no file content reaches a client.
   */
  async create(params: CreateParams): Promise<HostedSession> {
    if (this.held >= this.limits.maxSessions) {
      throw refusal(ErrorCode.SessionLimit, 'SESSION_LIMIT', `this server holds its limit of ${this.limits.maxSessions} sessions: close one (session/close) or wait for an idle one to be released`);
    }
    let cwd: string | undefined;
    if (params.cwd !== undefined) {
      if (this.limits.cwdRoots.length === 0) throw refusal(ErrorCode.CreateFailed, 'CWD_NOT_ALLOWED', 'this server does not let clients choose a cwd');
      const verdict = checkCwd(params.cwd, this.limits.cwdRoots);
      if (!verdict.ok) throw refusal(ErrorCode.CreateFailed, verdict.reason, verdict.message);
      cwd = verdict.cwd;
    }
    // Counted from here, so a burst of creates cannot all pass the check before the first one opens.
    this.opening++;
    let hosted: HostedSession;
    try {
      hosted = await HostedSession.open(this.openSession, { ...params, ...(cwd === undefined ? {} : { cwd }) }, this.onProblem, this.inspect, {
        ms: this.limits.idleTimeoutMs,
        onIdle: (s) => void this.end(s.id).catch(() => undefined),
      });
    } catch (err) {
      if (err instanceof RpcFailure) throw err;
      this.onProblem(`session/create failed: ${(err as Error)?.stack ?? String(err)}`);
      throw refusal(ErrorCode.CreateFailed, 'OPEN_FAILED', "could not create the session (the server's log says why)");
    } finally {
      this.opening--;
    }
    this.sessions.set(hosted.id, hosted);
    return hosted;
  }

  /**
   * `session/fork` of a hosted session: the fork written, then hosted like a created one (it counts toward
   * the limit), unless its turn is open. Contract: refuses with `UNKNOWN_SESSION`, `FORK_UNAVAILABLE` (a
   * server without a store to fork in) or `FORK_REFUSED` (the fork's own code in the message), or as `create`.
   */
  async fork(p: ParamsOf<'session/fork'>): Promise<ResultOf<'session/fork'>> {
    this.get(p.sessionId);
    if (!this.forkLog) throw refusal(ErrorCode.ForkRefused, 'FORK_UNAVAILABLE', 'this server keeps no store it can fork sessions in');
    let forked: Awaited<ReturnType<ForkLog>>;
    try {
      forked = await this.forkLog(p);
    } catch (err) {
      if (err instanceof ForkRefusedError) throw refusal(ErrorCode.ForkRefused, 'FORK_REFUSED', `${err.code}: ${err.message}`);
      this.onProblem(`session/fork failed: ${(err as Error)?.stack ?? String(err)}`);
      throw refusal(ErrorCode.ForkRefused, 'FORK_UNAVAILABLE', "could not fork the session (the server's log says why)");
    }
    if (!forked.open) await this.create({ fork: forked.id });
    return { sessionId: forked.id, forkOf: forked.forkOf, hosted: !forked.open };
  }

  get(sessionId: string): HostedSession {
    const s = this.sessions.get(sessionId);
    if (!s) throw refusal(ErrorCode.UnknownSession, 'UNKNOWN_SESSION', `no session ${JSON.stringify(sessionId)} in this server`);
    return s;
  }

  /**
   * Ends one session (`HostedSession.end`) and forgets it: from the call on,
   * the server answers for it as for an unknown session. Contract: rejects
   * only with `UNKNOWN_SESSION`.
   */
  async end(sessionId: string): Promise<void> {
    const s = this.get(sessionId);
    this.sessions.delete(sessionId);
    const done = s.end();
    this.ending.add(done);
    try {
      await done;
    } finally {
      this.ending.delete(done);
    }
  }

  list(): SessionSummary[] {
    return [...this.sessions.values()].map((s) => s.summary());
  }

  all(): HostedSession[] {
    return [...this.sessions.values()];
  }

  /** Contract: closes every session (logs flushed), and waits for those being ended; never rejects. */
  async close(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all([
      ...all.map((s) => s.close().catch((err) => this.onProblem(`closing ${s.id}: ${String(err)}`))),
      ...[...this.ending].map((p) => p.catch(() => undefined)),
    ]);
  }
}
