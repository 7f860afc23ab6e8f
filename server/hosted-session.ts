/**
 * A session as the server hosts it: the session itself, the clients attached
 * to it, and the fan-out of its durable entries, live text, state changes and
 * approval questions to them. It watches for idleness (no client attached,
 * no turn running) and says so once the idle time has passed.
 */
import type { InspectionEvent, Observer } from 'xstate';
import type { Answerer } from '../ports/approval.js';
import type { BridleSession } from '../runtime/bridle-session.js';
import type { Chunk } from '../log/chunks.js';
import { isSaveFailureCode, LogAppendError, LogAppendCode } from '../log/errors.js';
import type { DeltaSink } from '../actors/stream-model.js';
import type { Entry } from '../log/entries.js';
import { loggedWorkspace } from '../runtime/session-policy.js';
import { actorTree } from './actor-tree.js';
import { ApprovalDesk } from './approvals.js';
import { Attachment, type Peer } from './attachment.js';
import { callIn, entryNotices } from './entry-notice.js';
import { TOOLS } from '../ports/index.js';
import { ErrorCode, notification, refusal, Reason, type ApprovalRequest, type SessionSummary, type Snapshot } from './protocol.js';

/** What the server hands the session it asks for: who answers its approvals, and the server's own inspector (`--inspect`). */
export interface SessionHooks {
  answerer: Answerer;
  /** A spent budget asks the clients, as an approval of its own class (ADR 0047). */
  askOnBudget: true;
  inspect?: Observer<InspectionEvent>;
}

export interface CreateParams {
  cwd?: string;
  model?: string;
  /** A child bridle's session (the `process` subagent provider): its id, depth and parent. */
  id?: string;
  depth?: number;
  parent?: string;
  /** The W3C trace context the session's spans hang under (ADR 0055). */
  traceparent?: string;
  /** A fork `session/fork` has just written: open that session's log instead of a new one. */
  fork?: string;
}

/**
 * Opens one session with the server's hooks wired in, and does not start it:
 * the hosted session subscribes to it, then starts it (ADR 0051), so nothing it
 * does — a continued log's pending approval asked again — comes before the
 * server watches. The server calls it once per `session/create`, with a `cwd`
 * it has already checked. To refuse
 * with a reason the client may read, throw an `RpcFailure` (`refusal`); any
 * other failure reaches the client without its message, which could quote a
 * file it read.
 */
export type OpenSession = (params: CreateParams, hooks: SessionHooks) => BridleSession | Promise<BridleSession>;

/**
 * Opens a session of the server's store that this process does not hold, repaired and not started, to be resumed as
 * `bridle resume` would (the server calls it on `session/attach` or `session/input` for an id it does not
 * host). Resolves undefined when the store has no such session. Refusals as for `OpenSession`.
 */
export type ReopenSession = (sessionId: string, hooks: SessionHooks) => Promise<BridleSession | undefined>;

export interface IdleWatch {
  /** How long a session may sit with no client attached and no turn running; 0: forever. */
  ms: number;
  /** Called once that time has passed (the hub then ends the session). */
  onIdle: (session: HostedSession) => void;
}

export class HostedSession {
  private session!: BridleSession;
  readonly desk: ApprovalDesk;
  private readonly attachments = new Map<Peer, Attachment>();
  private flushQueued = false;
  private stateQueued = false;
  private lastState = '';
  private closed = false;
  private flushFailed = false;
  private ending?: Promise<void>;
  private idleTimer?: ReturnType<typeof setTimeout>;
  private readonly disposers: (() => void)[] = [];
  /** Who else takes the live chunks (a worker's relay to other workers, ADR 0035). */
  private readonly deltaTaps = new Set<DeltaSink>();

  private constructor(
    private readonly onProblem: (message: string) => void,
    private readonly idle: IdleWatch,
  ) {
    this.desk = new ApprovalDesk(() => this.id, {
      // The session asks only once started, and it starts after `open` returned it and the feed is wired.
      beforeAsk: () => this.session.recorder.flush(),
      announce: (req) => this.announce(req),
    });
  }

  /** Contract: rejects only when `open` throws or rejects, or the session's first entry cannot be saved (then it is closed). */
  static async open(open: OpenSession, params: CreateParams, onProblem: (message: string) => void, inspect?: Observer<InspectionEvent>, idle: IdleWatch = { ms: 0, onIdle: () => undefined }): Promise<HostedSession> {
    const h = new HostedSession(onProblem, idle);
    const guarded: Observer<InspectionEvent> | undefined = inspect && {
      next: (ev) => {
        try {
          inspect.next?.(ev);
        } catch {
          // An inspector's failure must never reach the actors (it would crash the process).
        }
      },
    };
    h.session = await open(params, { answerer: h.desk.answerer, askOnBudget: true, ...(guarded ? { inspect: guarded } : {}) });
    h.wire();
    try {
      h.session.start();
    } catch (err) {
      h.stop();
      // The store refused the session's first entry (a full disk): said as `openSession` says it for the CLI.
      if (!(err instanceof LogAppendError && err.code === LogAppendCode.LOG_APPEND_FAILED)) throw err;
      const message = `the session could not be saved (${err.code}: ${err.message})`;
      onProblem(`session/create: ${message}`);
      throw refusal(ErrorCode.CreateFailed, Reason.SESSION_NOT_SAVED, message);
    }
    return h;
  }

  get id(): string {
    return this.session.id;
  }

  /** The log so far, as the recorder holds it (a copy). */
  get entries(): readonly Entry[] {
    return this.session.recorder.entries.slice();
  }

  /** Hands `tap` every live chunk from now on, as the attached clients get them; returns the stop. */
  tapDeltas(tap: DeltaSink): () => void {
    this.deltaTaps.add(tap);
    return () => this.deltaTaps.delete(tap);
  }

  /** The session itself (the server's inbox pump gives it forwarded input). */
  get bridle(): BridleSession {
    return this.session;
  }

  /** Runs `fn` once when the session stops being hosted (ended, closed). */
  onStop(fn: () => void): void {
    if (this.closed) fn();
    else this.disposers.push(fn);
  }

  /** The session's feed, subscribed before it starts: entries, live text and state reach the clients from its first. */
  private wire(): void {
    let told: unknown;
    this.disposers.push(
      this.session.subscribe((ev) => {
        if (ev.type === 'entry.saved') this.fanOut(ev.entry);
        // Clients see only durable entries (ADR 0073): flush after any append, so they see entries between the
        // durability points too. The flush joins the process's round of this tick, shared with every other session.
        else if (ev.type === 'entry.appended') this.queueFlush();
        else if (ev.type === 'chunk.streamed') this.delta(ev.chunk, ev.step);
        // A running call's progress, as live as a delta and as unlogged (ADR 0065).
        else if (ev.type === 'tool.progress' && this.attachments.size > 0) {
          const { type: _t, ...p } = ev;
          this.broadcast(JSON.stringify(notification('session/progress', { sessionId: this.id, ...p })));
        }
        else if (ev.type === 'state.changed') {
          this.queueState();
          if (ev.snapshot.value === 'idle') {
            // The checkpoint written at idle is not a durability point; flush it so clients get it now.
            this.queueFlush();
            // A turn that ended because the log could not be saved: its entries may never become durable, so say it (once).
            const last = ev.snapshot.context.last;
            if (last && last !== told && last.reason === 'error' && isSaveFailureCode(last.code)) {
              told = last;
              this.unsaved(last.turn, last.code!, last.cause ?? '');
            }
          }
          this.watchIdle();
        } else if (ev.type === 'session.crashed') {
          const f = ev.error.saveFailure;
          if (f) this.unsaved(undefined, f.code, f.message);
        }
      }),
    );
    this.watchIdle();
  }

  private delta(chunk: Chunk, step: string): void {
    if (this.attachments.size > 0) this.broadcast(JSON.stringify(notification('session/delta', { sessionId: this.id, step, chunk })));
    for (const tap of this.deltaTaps) {
      try {
        tap(chunk, step);
      } catch {
        // A tap's failure never reaches the stream it watches.
      }
    }
  }

  /** No client and no turn: start the idle clock; anything else stops it. */
  private watchIdle(): void {
    const idle = !this.closed && !this.ending && this.attachments.size === 0 && this.session.actor.getSnapshot().value === 'idle';
    if (!idle || this.idle.ms <= 0) return this.stopIdleClock();
    if (this.idleTimer) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      this.idle.onIdle(this);
    }, this.idle.ms);
    // An idle session never keeps the process alive.
    this.idleTimer.unref?.();
  }

  private queueFlush(): void {
    if (this.flushQueued || this.closed) return;
    this.flushQueued = true;
    // A microtask, not a tick: the appends of this run of the machines are in it, and the store's round (at the end
    // of the tick) takes them with every other session's; a later append of the tick joins the same round.
    queueMicrotask(() => {
      this.flushQueued = false;
      if (this.closed) return;
      this.session.recorder.flush().catch((err) => {
        // A store that cannot save fails every flush after: said once, not once per entry.
        if (this.flushFailed) return;
        this.flushFailed = true;
        this.onProblem(`session ${this.id}: flush failed: ${String(err)}`);
      });
    });
  }

  /** Tells attached clients (and the server's log) that the session's log could not be saved (ADR 0017). */
  private unsaved(turn: string | undefined, code: string, message: string): void {
    const rec = this.session.recorder;
    this.onProblem(`session ${this.id}: the log could not be saved (${code}): ${message}`);
    const params = { sessionId: this.id, ...(turn ? { turn } : {}), code, message, durableSeq: rec.durableUpTo, lastSeq: rec.lastSeq };
    this.broadcast(JSON.stringify(notification('session/unsaved', params)));
  }

  private queueState(): void {
    if (this.stateQueued || this.closed) return;
    this.stateQueued = true;
    setImmediate(() => {
      this.stateQueued = false;
      if (this.closed) return;
      const snap = this.snapshot();
      const text = JSON.stringify(notification('session/state', { sessionId: this.id, value: snap.value, actors: snap.actors }));
      if (text === this.lastState) return;
      this.lastState = text;
      this.broadcast(text);
    });
  }

  /** `session/entry`, a result's with its render intent from the session's own tools (ADR 0067). */
  private notices?: (entry: Entry) => string;
  private serialize = (entry: Entry): string => (this.notices ??= entryNotices(this.id, () => this.session.host.get(TOOLS), (callId) => callIn(this.session.recorder.entries, callId)))(entry);

  private fanOut(entry: Entry): void {
    if (this.attachments.size === 0) return;
    const text = this.serialize(entry);
    for (const a of this.attachments.values()) a.offer(entry, text);
  }

  private broadcast(text: string): void {
    for (const a of this.attachments.values()) if (a.isLive) a.peer.send(text);
  }

  private announce(req: ApprovalRequest): void {
    this.broadcast(JSON.stringify(notification('approval/request', req)));
  }

  /**
   * Subscribes `peer` at once (entries that become durable from now on are
   * buffered) and returns `start`, which sends the backlog, the buffer, the
   * open approval questions and the current state, then goes live. The server
   * calls `start` after the attach response has gone out.
   */
  attach(peer: Peer, fromSeq: number): { durableSeq: number; start: () => Promise<void> } {
    // Attaching again replaces this peer's feed for the session.
    const a = new Attachment(peer, fromSeq, this.serialize);
    this.attachments.set(peer, a);
    this.watchIdle();
    const rec = this.session.recorder;
    return {
      durableSeq: rec.durableUpTo,
      start: async () => {
        // A replaced feed stops; one the session's end reached still sends what it owes, then its last message.
        if (this.attachments.get(peer) !== a && !a.ended) return;
        const upTo = rec.durableUpTo;
        await a.start(rec.entries.filter((e) => e.seq >= fromSeq && e.seq <= upTo), () => peer.room(), () => {
          for (const req of this.desk.open()) peer.send(JSON.stringify(notification('approval/request', req)));
          const snap = this.snapshot();
          peer.send(JSON.stringify(notification('session/state', { sessionId: this.id, value: snap.value, actors: snap.actors })));
        });
      },
    };
  }

  detach(peer: Peer): void {
    this.attachments.delete(peer);
    this.watchIdle();
  }

  isAttached(peer: Peer): boolean {
    return this.attachments.has(peer);
  }

  /** Resolves with the input's seq once its entry is durable; rejects when it could not be saved. */
  send(text: string, mode: 'followup' | 'steer' | 'inject' = 'followup'): Promise<number> {
    return this.session.send(text, mode);
  }

  /** Starts a compaction now (between turns, or right after the running turn); its brackets arrive as entries. */
  compact(): void {
    void this.session.compact('client');
  }

  cancel(): void {
    void this.session.cancel('client');
  }

  snapshot(): Snapshot {
    const actors = actorTree(this.session.actor);
    return { sessionId: this.id, value: actors[0]?.value ?? null, actors, durableSeq: this.session.recorder.durableUpTo };
  }

  summary(): SessionSummary {
    const start = this.session.recorder.entries.find((e) => e.kind === 'session/start');
    return {
      sessionId: this.id,
      cwd: loggedWorkspace(this.session.recorder.entries) ?? '',
      model: start?.kind === 'session/start' ? start.model : '',
      value: this.session.actor.getSnapshot().value,
      lastSeq: this.session.recorder.lastSeq,
      attached: this.attachments.size,
    };
  }

  /**
   * Ends the session cleanly (`session/close`, or idleness, when no client is
   * attached): the running turn is cancelled (an open approval is decided
   * `cancelled`), queued input stays in the log for a resume, the log is flushed and the store
   * closed; attached clients get every entry up to the end, then
   * `session/closed`.
   * Contract: idempotent; never rejects (a failure is reported to `onProblem`).
   */
  end(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return (this.ending ??= (async () => {
      this.stopIdleClock();
      try {
        await this.session.end('server');
      } catch (err) {
        this.onProblem(`session ${this.id}: ending failed: ${String(err)}`);
      }
      const text = JSON.stringify(notification('session/closed', { sessionId: this.id, lastSeq: this.session.recorder.lastSeq }));
      for (const a of this.attachments.values()) a.end(text);
      this.stop();
    })());
  }

  /**
   * Stops the session without deciding anything: an approval still open stays
   * open in the log (asked, never decided), for resume to ask again.
   * Contract: idempotent; resolves once the log is flushed and closed.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.ending) return this.ending;
    this.stop();
    await this.session.close();
  }

  private stopIdleClock(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private stop(): void {
    this.closed = true;
    this.stopIdleClock();
    for (const d of this.disposers.splice(0)) d();
    this.attachments.clear();
  }
}
