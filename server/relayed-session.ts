/**
 * A session another worker runs, as this worker serves it to its own clients
 * (ADR 0030): every durable entry relayed from the shared store, in order and
 * once per client; the approval questions the log shows asked and not yet
 * decided (ADR 0032); and input, approval answers, cancels and compactions
 * forwarded to the owner through the store; and the owner's live model
 * chunks, as they come (ADR 0035). It runs nothing and appends nothing: only
 * the lease holder does.
 *
 * The relay reads by seq: on every wake-up (a notification after the owner's
 * commit) and on a timer, it reads the entries past the last one it read and
 * offers them to its attachments, which deduplicate by seq; a client's
 * backlog is read after its attachment subscribed. So a missed wake-up costs
 * latency, never an entry.
 */
import type { Entry } from '../log/entries.js';
import { nthCall } from '../log/ids.js';
import type { Delta, Forwardable, ForwardSettled, RelaySource } from '../ports/relay.js';
import { parseArgs } from './approvals.js';
import { changeOf } from '../tools/diff.js';
import { knownToolLookup } from '../tools/index.js';
import type { ToolLookup } from '../tools/present.js';
import { entryNotices } from './entry-notice.js';
import { Attachment, type Peer } from './attachment.js';
import { notification, type ApprovalRequest, type SessionSummary, type Snapshot } from './protocol.js';

/** Every how many reads a relay with clients checks whether the owner's lease has expired (a sweep of the sessions it relays). */
export const OWNER_CHECK_EVERY = 4;

/** How many answered steps a relay remembers, to drop their late chunks (steps run one at a time: a few suffice). */
const ANSWERED_KEPT = 16;

/** Every how long a relay reads again without a wake-up (the net under a missed notification). */
export const RELAY_POLL_MS = 500;

let builtins: ToolLookup | undefined;
const builtinLookup = (): ToolLookup => (builtins ??= knownToolLookup());

export class RelayedSession {
  private readonly attachments = new Map<Peer, Attachment>();
  private cursor = 0;
  private pulling?: Promise<void>;
  private again = false;
  private closed = false;
  private readonly stopWake: () => void;
  private readonly stopDeltas: () => void;
  private readonly timer: ReturnType<typeof setInterval>;
  private start?: { cwd: string; model: string };
  /** The tool calls the log shows, by call id (`<step>.c<n>`, as the step machine names them): what a question shows of its call. */
  private readonly calls = new Map<string, { name: string; arguments: string }>();
  /** The last steps whose `assistant/message` this relay has read: a chunk of one of them that comes later is stale (ADR 0035). */
  private readonly answered = new Set<string>();
  /** Questions the log shows asked and not yet decided, oldest first. */
  private readonly asked = new Map<string, ApprovalRequest>();

  constructor(
    readonly id: string,
    readonly source: RelaySource,
    private readonly onProblem: (message: string) => void,
    private readonly onUnused: (s: RelayedSession) => void,
    /** Called when the owner's lease has expired while clients watch: the worker takes the session over. */
    private readonly onOwnerGone: (s: RelayedSession) => void = () => undefined,
  ) {
    this.stopWake = source.subscribe(() => this.pull());
    this.stopDeltas = source.deltas?.((d) => this.live(d)) ?? (() => undefined);
    let ticks = 0;
    this.timer = setInterval(() => {
      void this.pull();
      if (++ticks % OWNER_CHECK_EVERY === 0 && this.attachments.size > 0) {
        void source.ownerGone().then(
          (gone) => gone && !this.closed && this.onOwnerGone(this),
          () => undefined,
        );
      }
    }, RELAY_POLL_MS);
    this.timer.unref?.();
  }

  /** `session/entry`, a result's with its render intent from the built-in tools, as `present` renders the questions (ADR 0067). */
  private notices?: (entry: Entry) => string;
  private serialize = (entry: Entry): string => (this.notices ??= entryNotices(this.id, builtinLookup, (callId) => this.calls.get(callId)))(entry);

  /** Reads what is new and offers it; one read at a time, one more if woken meanwhile. */
  pull(): Promise<void> {
    if (this.closed || this.attachments.size === 0) return Promise.resolve();
    if (this.pulling) {
      this.again = true;
      return this.pulling;
    }
    this.pulling = (async () => {
      try {
        do {
          this.again = false;
          const lines = await this.source.tail(this.cursor + 1);
          const asked: ApprovalRequest[] = [];
          for (const line of lines) {
            const entry = JSON.parse(line) as Entry;
            if (entry.seq <= this.cursor) continue;
            this.cursor = entry.seq;
            const ask = this.note(entry);
            if (ask) asked.push(ask);
            const text = this.serialize(entry);
            for (const a of this.attachments.values()) a.offer(entry, text);
          }
          // After their `approval/asked`, as the owner asks, those this read left open (a read catching up may also hold the decision):
          // to the clients that are live; the others get them when they go live.
          for (const ask of asked) if (this.asked.get(ask.callId) === ask) this.announce(ask);
        } while (this.again && !this.closed);
      } catch (err) {
        this.onProblem(`relaying session ${this.id}: ${String(err)}`);
      } finally {
        this.pulling = undefined;
      }
    })();
    return this.pulling;
  }

  /** Keeps what the relay must know of the log; returns the question an `approval/asked` opens. */
  private note(entry: Entry): ApprovalRequest | undefined {
    switch (entry.kind) {
      case 'session/start':
        this.start = { cwd: entry.cwd, model: entry.model };
        return undefined;
      case 'assistant/message': {
        this.answered.add(entry.step);
        if (this.answered.size > ANSWERED_KEPT) this.answered.delete(this.answered.values().next().value!);
        let i = 0;
        for (const b of entry.blocks) if (b.type === 'tool-call') this.calls.set(nthCall(entry.step, ++i), { name: b.name, arguments: b.arguments });
        return undefined;
      }
      case 'approval/asked': {
        const raw = this.calls.get(entry.callId)?.arguments ?? '';
        const args = parseArgs(raw);
        const change = changeOf(entry.name, args);
        const request: ApprovalRequest = { sessionId: this.id, callId: entry.callId, tool: entry.name, args, reason: entry.reason, presented: this.source.present(entry.name, raw), ...(change ? { change } : {}) };
        this.asked.set(entry.callId, request);
        return request;
      }
      case 'approval/decided':
        this.asked.delete(entry.callId);
        return undefined;
      // A question no decision closed is not answerable past its turn's end or the session changing hands (a resume asks again).
      case 'turn/end':
      case 'session/takeover':
      case 'session/reopen':
        this.asked.clear();
        return undefined;
      default:
        return undefined;
    }
  }

  /**
   * An owner's live chunk, to the live clients — unless the step's answer is in the log already: chunks travel
   * apart from entries, and one that arrives after its message would show text the message has replaced.
   */
  private live(d: Delta): void {
    if (this.attachments.size === 0 || this.answered.has(d.step)) return;
    this.broadcast(JSON.stringify(notification('session/delta', { sessionId: this.id, step: d.step, chunk: d.chunk })));
  }

  private announce(request: ApprovalRequest): void {
    this.broadcast(JSON.stringify(notification('approval/request', request)));
  }

  /** To the clients that are live (one still sending its backlog gets what it is sent after). */
  private broadcast(text: string): void {
    for (const a of this.attachments.values()) if (a.isLive) a.peer.send(text);
  }

  /** The questions open now, oldest first. */
  openApprovals(): ApprovalRequest[] {
    return [...this.asked.values()];
  }

  attach(peer: Peer, fromSeq: number): { durableSeq: number; start: () => Promise<void> } {
    const a = new Attachment(peer, fromSeq, this.serialize);
    this.attachments.set(peer, a);
    return {
      durableSeq: this.cursor,
      start: async () => {
        if (this.attachments.get(peer) !== a) return;
        // Subscribed above: what the relay reads from now on is buffered, the backlog read after it.
        const backlog = (await this.source.tail(fromSeq)).map((l) => JSON.parse(l) as Entry);
        for (const e of backlog) if (e.kind === 'session/start') this.start = { cwd: e.cwd, model: e.model };
        await a.start(backlog, () => peer.room(), () => {
          // Every entry the relay has read reached this client before now: so has each open question's `approval/asked`.
          for (const req of this.asked.values()) peer.send(JSON.stringify(notification('approval/request', req)));
          peer.send(JSON.stringify(notification('session/state', { sessionId: this.id, value: 'elsewhere', actors: [] })));
        });
        void this.pull();
      },
    };
  }

  /** The attachments, for a worker that takes the session over: each client goes on from the entry after the last it was sent. */
  handOver(): { peer: Peer; next: number }[] {
    return [...this.attachments.values()].map((a) => ({ peer: a.peer, next: a.sentUpTo + 1 }));
  }

  detach(peer: Peer): void {
    this.attachments.delete(peer);
    if (this.attachments.size === 0) this.onUnused(this);
  }

  isAttached(peer: Peer): boolean {
    return this.attachments.has(peer);
  }

  snapshot(): Snapshot {
    return { sessionId: this.id, value: 'elsewhere', actors: [], durableSeq: this.cursor };
  }

  summary(): SessionSummary {
    return { sessionId: this.id, cwd: this.start?.cwd ?? '', model: this.start?.model ?? '', value: 'elsewhere', lastSeq: this.cursor, attached: this.attachments.size };
  }

  /** Stops relaying; the session itself runs on where it runs. Contract: idempotent. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    clearInterval(this.timer);
    this.stopWake();
    this.stopDeltas();
    this.attachments.clear();
    return Promise.resolve();
  }
}
