/**
 * A session as the server hosts it: the session itself, the clients attached
 * to it, and the fan-out of its durable entries, live text, state changes and
 * approval questions to them.
 */
import type { InspectionEvent, Observer } from 'xstate';
import type { Answerer } from '../../actors/approval.js';
import type { BridleSession } from '../../actors/session.js';
import type { DeltaSink } from '../../actors/stream-model.js';
import type { Entry } from '../../log/entries.js';
import { actorTree } from './actor-tree.js';
import { ApprovalDesk } from './approvals.js';
import { Attachment, type Peer } from './attachment.js';
import { notification, type ApprovalRequest, type SessionSummary, type Snapshot } from './protocol.js';

/** What the server hands the session it asks for: its side of the approval, delta and state seams. */
export interface SessionHooks {
  answerer: Answerer;
  onChunk: DeltaSink;
  inspect: Observer<InspectionEvent>;
}

export interface CreateParams {
  cwd?: string;
  model?: string;
}

/** Opens one session with the server's hooks wired in. The server calls it once per `session/create`. */
export type OpenSession = (params: CreateParams, hooks: SessionHooks) => BridleSession | Promise<BridleSession>;

export class HostedSession {
  private session!: BridleSession;
  readonly desk: ApprovalDesk;
  private readonly attachments = new Map<Peer, Attachment>();
  private flushQueued = false;
  private stateQueued = false;
  private lastState = '';
  private closed = false;
  private readonly disposers: (() => void)[] = [];

  private constructor(private readonly onProblem: (message: string) => void) {
    this.desk = new ApprovalDesk(() => this.id, {
      beforeAsk: () => this.session.recorder.flush(),
      announce: (req) => this.announce(req),
    });
  }

  /** Contract: rejects only when `open` throws or rejects. */
  static async open(open: OpenSession, params: CreateParams, onProblem: (message: string) => void, inspect?: Observer<InspectionEvent>): Promise<HostedSession> {
    const h = new HostedSession(onProblem);
    const hooks: SessionHooks = {
      answerer: h.desk.answerer,
      onChunk: (chunk, step) => h.broadcast(JSON.stringify(notification('session/delta', { sessionId: h.id, step, chunk }))),
      inspect: {
        next: (ev) => {
          try {
            inspect?.next?.(ev);
          } catch {
            // An inspector's failure must never reach the actors (it would crash the process).
          }
          if (ev.type === '@xstate.snapshot') h.queueState();
        },
      },
    };
    h.session = await open(params, hooks);
    h.wire();
    return h;
  }

  get id(): string {
    return this.session.id;
  }

  private wire(): void {
    const rec = this.session.recorder;
    this.disposers.push(
      rec.onDurable((e) => this.fanOut(e)),
      // Flush soon after any append, so clients see entries between the durability points too.
      rec.onEntry(() => this.queueFlush()),
    );
    // The checkpoint written at idle is not a durability point; flush it so clients get it now.
    const sub = this.session.actor.subscribe({ next: (s) => s.value === 'idle' && this.queueFlush(), error: () => undefined });
    this.disposers.push(() => sub.unsubscribe());
    this.queueFlush();
  }

  private queueFlush(): void {
    if (this.flushQueued || this.closed) return;
    this.flushQueued = true;
    setImmediate(() => {
      this.flushQueued = false;
      if (!this.closed) this.session.recorder.flush().catch((err) => this.onProblem(`session ${this.id}: flush failed: ${String(err)}`));
    });
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

  private serialize = (entry: Entry): string => JSON.stringify(notification('session/entry', { sessionId: this.id, entry }));

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
    const rec = this.session.recorder;
    return {
      durableSeq: rec.durableUpTo,
      start: async () => {
        if (this.attachments.get(peer) !== a) return;
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
  }

  send(text: string, mode: 'followup' | 'steer' | 'inject' = 'followup'): void {
    this.session.send(text, mode);
  }

  /** Starts a compaction now (between turns, or right after the running turn); its brackets arrive as entries. */
  compact(): void {
    void this.session.compact();
  }

  cancel(): void {
    void this.session.cancel('user');
  }

  snapshot(): Snapshot {
    const actors = actorTree(this.session.actor);
    return { sessionId: this.id, value: actors[0]?.value ?? null, actors, durableSeq: this.session.recorder.durableUpTo };
  }

  summary(): SessionSummary {
    const start = this.session.recorder.entries.find((e) => e.kind === 'session/start');
    return {
      sessionId: this.id,
      cwd: start?.kind === 'session/start' ? start.cwd : '',
      model: start?.kind === 'session/start' ? start.model : '',
      value: this.session.actor.getSnapshot().value,
      lastSeq: this.session.recorder.lastSeq,
      attached: this.attachments.size,
    };
  }

  /**
   * Stops the session without deciding anything: an approval still open stays
   * open in the log (asked, never decided), for resume to ask again.
   * Contract: idempotent; resolves once the log is flushed and closed.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const d of this.disposers.splice(0)) d();
    this.attachments.clear();
    await this.session.close();
  }
}
