/**
 * The sessions one server hosts, by id, and their limits: how many may be
 * open at once, where a client may point one (`cwd`), and how long one may
 * sit idle before it is released.
 */
import type { InspectionEvent, Observer } from 'xstate';
import { checkCwd } from './allowed-cwd.js';
import { ForkRefusedError } from '../runtime/logs/fork.js';
import { HostedSession, type CreateParams, type OpenSession } from './hosted-session.js';
import { atLimit, DEFAULT_LIMITS, type ForkLog, type HubLimits } from './hub-limits.js';
import { ErrorCode, refusal, RpcFailure, Reason, type ErrorReason, type ParamsOf, type ResultOf, type SessionSummary } from './protocol.js';
import type { Peer } from './attachment.js';
import type { Forwardable, SweepOutcome } from '../ports/relay.js';
import { RelayedSession } from './relayed-session.js';
import { SessionLockedError } from '../log/errors.js';
import type { CostReport } from '../log/cost.js';

/** A session as a client reaches it here: run by this worker, or relayed from the one that runs it. */
export type Served = HostedSession | RelayedSession;

/** Refusals that hold for this worker until the session's log changes. */
const NOT_RUNNABLE_HERE = new Set<string>([Reason.SESSION_NOT_RESUMABLE, Reason.UNKNOWN_SESSION, Reason.POLICY_WIDENED, Reason.MODEL_UNAVAILABLE]);

/** Held by another writer: refused so by `reopen`, or the store's own `SessionLockedError` an embedder's `reopen` let through. */
const isLocked = (err: unknown): boolean => (err instanceof RpcFailure && (err.data as { reason?: string } | undefined)?.reason === Reason.SESSION_LOCKED) || (err instanceof SessionLockedError);

const notPending = (callId: string) => refusal(ErrorCode.NotPending, Reason.NOT_PENDING, `no approval is waiting for ${JSON.stringify(callId)} (already answered, cancelled, or never asked)`);

export class Hub {
  private readonly sessions = new Map<string, HostedSession>();
  private readonly ending = new Set<Promise<void>>();
  /** Sessions being opened from the store, by id: a burst of attaches opens each once. */
  private readonly reopening = new Map<string, Promise<Served>>();
  private readonly relays = new Map<string, RelayedSession>();
  private readonly promoting = new Map<string, Promise<Served>>();
  /** Openings a sweep started: a client that joins one and meets another worker's claim asks again (and is relayed). */
  private readonly swept = new Set<Promise<Served>>();
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
      throw atLimit(this.limits.maxSessions);
    }
    let cwd: string | undefined;
    if (params.cwd !== undefined) {
      if (this.limits.cwdRoots.length === 0) throw refusal(ErrorCode.CreateFailed, Reason.CWD_NOT_ALLOWED, 'this server does not let clients choose a cwd');
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
      throw refusal(ErrorCode.CreateFailed, Reason.OPEN_FAILED, "could not create the session (the server's log says why)");
    } finally {
      this.opening--;
    }
    this.host(hosted);
    return hosted;
  }

  private host(hosted: HostedSession): void {
    this.sessions.set(hosted.id, hosted);
    if (this.limits.adopt) hosted.onStop(this.limits.adopt(hosted));
  }

  /**
   * `session/fork` of a hosted session: the fork written, then hosted like a created one (it counts toward
   * the limit), unless its turn is open and cannot go on. Contract: refuses with `UNKNOWN_SESSION`, `FORK_UNAVAILABLE` (a
   * server without a store to fork in) or `FORK_REFUSED` (the fork's own code in the message), or as `create`.
   */
  async fork(p: ParamsOf<'session/fork'>): Promise<ResultOf<'session/fork'>> {
    this.get(p.sessionId);
    if (!this.forkLog) throw refusal(ErrorCode.ForkRefused, Reason.FORK_UNAVAILABLE, 'this server keeps no store it can fork sessions in');
    let forked: Awaited<ReturnType<ForkLog>>;
    try {
      forked = await this.forkLog(p);
    } catch (err) {
      if (err instanceof ForkRefusedError) throw refusal(ErrorCode.ForkRefused, Reason.FORK_REFUSED, `${err.code}: ${err.message}`);
      this.onProblem(`session/fork failed: ${(err as Error)?.stack ?? String(err)}`);
      throw refusal(ErrorCode.ForkRefused, Reason.FORK_UNAVAILABLE, "could not fork the session (the server's log says why)");
    }
    // A re-answered approval's turn goes on inside the fork as it is hosted (ADR 0031): the approved call runs, or the model hears of the denial.
    const hosted = !forked.open || forked.resumable === true;
    if (hosted) await this.create({ fork: forked.id });
    return { sessionId: forked.id, forkOf: forked.forkOf, hosted };
  }

  /** `session/cost`: the projection of a session this server runs (a relayed one is refused as `snapshot` is). */
  async cost(sessionId: string): Promise<CostReport | undefined> {
    const s = this.get(sessionId);
    return this.limits.usage?.(s.id, s.entries);
  }

  /** A session this server runs. Contract: `UNKNOWN_SESSION` when it runs none by that id; `SESSION_ELSEWHERE` when it only relays it. */
  get(sessionId: string): HostedSession {
    const s = this.sessions.get(sessionId);
    if (s) return s;
    if (this.relays.has(sessionId)) throw refusal(ErrorCode.Elsewhere, Reason.SESSION_ELSEWHERE, `session ${JSON.stringify(sessionId)} runs on another worker; this one relays its entries and approval questions and forwards input, approval answers, cancels and compactions (snapshot and close on the worker that runs it)`);
    throw refusal(ErrorCode.UnknownSession, Reason.UNKNOWN_SESSION, `no session ${JSON.stringify(sessionId)} in this server`);
  }

  /** Detaches a client from a session it watches here, run or relayed; nothing if there is none. */
  detach(sessionId: string, peer: Peer): void {
    (this.sessions.get(sessionId) ?? this.relays.get(sessionId))?.detach(peer);
  }

  /**
   * A client's input: given to the session when this server runs it; else forwarded through the store to the
   * worker that does (durable in its inbox first) and answered once that worker has logged it. When that
   * worker's lease expires meanwhile, this one takes the session over and logs the input itself.
   */
  async input(sessionId: string, text: string, mode: 'followup' | 'steer' | 'inject' = 'followup'): Promise<number> {
    const s = await this.find(sessionId);
    if (s instanceof HostedSession) return s.send(text, mode);
    return this.forwarded(s, { kind: 'input', mode, text });
  }

  /**
   * `session/cancel` (`compact`: `session/compact`): asked of the session here, or forwarded to the worker that
   * runs it and answered once that worker has logged it (nothing logged: nothing ran to cancel, as here).
   * Contract: `UNKNOWN_SESSION` as `get`.
   */
  async cancel(sessionId: string, compact = false): Promise<void> {
    const relayed = this.sessions.has(sessionId) ? undefined : this.relays.get(sessionId);
    if (!relayed) {
      const s = this.get(sessionId);
      if (compact) s.compact();
      else s.cancel();
      return;
    }
    await this.forwarded(relayed, { kind: compact ? 'compact' : 'cancel', by: 'client' });
  }

  /**
   * The gate of every method that acts on a session (issue 20, item 2): only a client attached to it here may.
   * Contract: refuses `NOT_ATTACHED` naming `what` (`UNKNOWN_SESSION` for an unknown id on a server without a
   * store to open it from); opens nothing (only `session/attach` does).
   */
  attachedTo(sessionId: string, peer: Peer, what: string): void {
    const s = this.sessions.get(sessionId) ?? this.relays.get(sessionId);
    if (!s && !this.limits.reopen) this.get(sessionId);
    if (!s?.isAttached(peer)) throw refusal(ErrorCode.NotAttached, Reason.NOT_ATTACHED, `attach to session ${JSON.stringify(sessionId)} (session/attach) before ${what}`);
  }

  /**
   * `approval/respond` from `peer`: answered at the session's desk here, or forwarded to the worker that runs it
   * and answered once that worker has logged the decision. Contract: refuses `NOT_ATTACHED` for a peer not
   * attached to the session on this worker, `NOT_PENDING` (here or from the owner) for a call not waiting.
   */
  async respond(sessionId: string, peer: Peer, callId: string, outcome: 'allowed-once' | 'rejected', values?: Record<string, string | number | boolean>): Promise<void> {
    const relayed = this.sessions.has(sessionId) ? undefined : this.relays.get(sessionId);
    // Only a client that watches the session (and so was asked) may answer for it.
    this.attachedTo(sessionId, peer, 'answering its approvals');
    const s = relayed ?? this.get(sessionId);
    const by = `ws:${peer.label}`;
    if (relayed) {
      await this.forwarded(relayed, { kind: 'approval', callId, outcome, by, attached: true });
      return;
    }
    if (!(s as HostedSession).desk.respond(callId, outcome, by, values)) throw notPending(callId);
  }

  /**
   * Forwards to the worker that runs a relayed session and waits for its settlement: the seq it logged, or its
   * refusal (thrown as this worker's). When that worker's lease expires meanwhile, this one takes the session
   * over and its own inbox pump applies the row.
   */
  private async forwarded(relay: RelayedSession, f: Forwardable): Promise<number> {
    let s: Served = relay;
    const source = relay.source;
    const handle = await source.forward(f);
    for (;;) {
      const r = await source.logged(handle);
      if ('seq' in r) return r.seq;
      if ('refused' in r) throw refusal(r.refused.code, r.refused.reason as ErrorReason, r.refused.message);
      s = await this.promote(s);
      // Run here now: this worker's inbox pump applies it; a relay again: another worker took it over.
      if (s instanceof HostedSession) continue;
    }
  }

  /**
   * The relay of a session whose owner has gone makes way for this worker running it (taken over, repaired,
   * resumed) — or for a relay of whichever worker took it first; its clients go on from the entry after the last
   * they were sent.
   */
  private promote(r: Served): Promise<Served> {
    if (!(r instanceof RelayedSession)) return Promise.resolve(r);
    let p = this.promoting.get(r.id);
    if (p) return p;
    p = (async () => {
      if (this.relays.get(r.id) === r) this.relays.delete(r.id);
      let next: Served;
      try {
        next = await this.find(r.id);
      } catch (err) {
        // Not taken over (the store refused, or was out of reach): the relay goes on relaying.
        if (!this.relays.has(r.id) && !this.sessions.has(r.id)) this.relays.set(r.id, r);
        throw err;
      }
      // The relay's clients as they stand now, then no more from it: no await in between.
      const peers = r.handOver();
      void r.close();
      for (const { peer, next: from } of peers) void next.attach(peer, from).start().catch((err: unknown) => this.onProblem(`re-attaching to ${r.id}: ${String(err)}`));
      return next;
    })().finally(() => this.promoting.delete(r.id));
    this.promoting.set(r.id, p);
    return p;
  }

  /**
   * The session, hosted here already or opened now from the store (`reopen`: repaired and resumed as
   * `bridle resume` would). Contract: rejects with `UNKNOWN_SESSION` when neither has it, `SESSION_LIMIT`
   * at the limit, whatever `reopen` refused with (an `RpcFailure`), else `OPEN_FAILED` (the reason to
   * `onProblem` only).
   */
  async find(sessionId: string): Promise<Served> {
    const s = this.sessions.get(sessionId);
    if (s || !this.limits.reopen) return s ?? this.get(sessionId);
    const relayed = this.relays.get(sessionId);
    if (relayed) return (await relayed.source.ownerLive()) ? relayed : this.promote(relayed);
    const pending = this.reopening.get(sessionId);
    if (pending) {
      if (!this.swept.has(pending)) return pending;
      // A sweep's opening relays nothing: one that lost the claim to another worker is asked again, as a client's.
      return pending.catch((err: unknown) => (isLocked(err) ? this.find(sessionId) : Promise.reject(err)));
    }
    return this.reopenHere(sessionId, true);
  }

  /**
   * The lease sweep's ask (ADR 0034): opens a session of the store whose owner's lease has expired exactly as
   * an attach would (taken over, repaired, resumed, its queued input run), with no client attached. Never
   * relays and never rejects: `taken` (run here now), `here` (hosted, relayed or being opened here already),
   * `lost` (another worker holds it: it took it first), `full` (at `maxSessions`), `refused` (it cannot be
   * opened here: not resumable, or gone), `failed` (opening it failed otherwise: the store out of reach, …);
   * the reason of the last two to `onProblem`.
   */
  async sweep(sessionId: string): Promise<SweepOutcome> {
    if (!this.limits.reopen) return 'refused';
    if (this.sessions.has(sessionId) || this.relays.has(sessionId) || this.reopening.has(sessionId) || this.promoting.has(sessionId)) return 'here';
    if (this.held >= this.limits.maxSessions) return 'full';
    const opening = this.reopenHere(sessionId, false);
    this.swept.add(opening);
    try {
      await opening;
      return 'taken';
    } catch (err) {
      if (isLocked(err)) return 'lost';
      const reason = err instanceof RpcFailure ? (err.data as { reason?: string } | undefined)?.reason : undefined;
      const why = err instanceof RpcFailure ? `${err.message}${reason ? ` (${reason})` : ''}` : String(err);
      this.onProblem(`sweep: session ${sessionId} not taken over: ${why}`);
      // Not this worker's to run until its log changes (its lease left alone for a worker that can, ADR 0042).
      return reason !== undefined && NOT_RUNNABLE_HERE.has(reason) ? 'refused' : 'failed';
    } finally {
      this.swept.delete(opening);
    }
  }

  /** Opens a session of the store here; `relay`: a session another live worker holds is relayed, else its refusal stands. */
  private reopenHere(sessionId: string, relay: boolean): Promise<Served> {
    if (this.held >= this.limits.maxSessions) {
      return Promise.reject(atLimit(this.limits.maxSessions));
    }
    const reopen = this.limits.reopen!;
    this.opening++;
    const opening = (async () => {
      try {
        const hosted = await HostedSession.open(
          async (_params, hooks) => {
            const session = await reopen(sessionId, hooks);
            if (session) return session;
            throw refusal(ErrorCode.UnknownSession, Reason.UNKNOWN_SESSION, `no session ${JSON.stringify(sessionId)} in this server or its store`);
          },
          {},
          this.onProblem,
          this.inspect,
          { ms: this.limits.idleTimeoutMs, onIdle: (h) => void this.end(h.id).catch(() => undefined) },
        );
        this.host(hosted);
        return hosted as Served;
      } catch (err) {
        if (relay && isLocked(err) && this.limits.relay) {
          // Another live worker runs it: relay it from the store instead.
          const source = await this.limits.relay(sessionId);
          if (!source) throw err;
          const relay = new RelayedSession(
            sessionId,
            source,
            this.onProblem,
            (x) => {
              if (this.relays.get(x.id) === x) this.relays.delete(x.id);
              void x.close();
            },
            // Its owner died while clients watch: take it over now, not at their next input.
            (x) => void this.promote(x).catch((e: unknown) => this.onProblem(`taking over ${x.id}: ${String(e)}`)),
          );
          this.relays.set(sessionId, relay);
          return relay;
        }
        if (err instanceof RpcFailure) throw err;
        this.onProblem(`opening session ${sessionId} from the store failed: ${(err as Error)?.stack ?? String(err)}`);
        throw refusal(ErrorCode.CreateFailed, Reason.OPEN_FAILED, "could not open the session (the server's log says why)");
      } finally {
        this.opening--;
        this.reopening.delete(sessionId);
      }
    })();
    this.reopening.set(sessionId, opening);
    return opening;
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
    return [...this.sessions.values(), ...this.relays.values()].map((s) => s.summary());
  }

  all(): HostedSession[] {
    return [...this.sessions.values()];
  }

  /** Contract: closes every session (logs flushed), and waits for those being ended; never rejects. */
  async close(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    for (const r of this.relays.values()) void r.close();
    this.relays.clear();
    await Promise.all([
      ...all.map((s) => s.close().catch((err) => this.onProblem(`closing ${s.id}: ${String(err)}`))),
      ...[...this.ending].map((p) => p.catch(() => undefined)),
    ]);
  }
}
