/**
 * One client attached to one session: the entries from `fromSeq` on, then
 * live ones, with no gap and no duplicate. The attachment subscribes before
 * the backlog is read and buffers what arrives meanwhile; every delivery is
 * deduplicated by seq, so the order in which backlog and live entries turn up
 * does not matter.
 */
import type { Entry } from '../log/entries.js';

/** Where an attachment's messages go: a client connection. */
export interface Peer {
  /** Names the client in logs and in `approval/decided.by`. */
  readonly label: string;
  /** Sends one serialized message. Returns false when the peer has been dropped. */
  send(text: string): boolean;
  /** Resolves when the peer can take more without piling up; false once it is gone. */
  room(): Promise<boolean>;
}

export class Attachment {
  private lastSent: number;
  private live = false;
  private buffer: { entry: Entry; text: string }[] = [];
  private last?: string;

  constructor(
    readonly peer: Peer,
    readonly fromSeq: number,
    private readonly serialize: (entry: Entry) => string,
  ) {
    this.lastSent = fromSeq - 1;
  }

  get isLive(): boolean {
    return this.live;
  }

  /** Set once `end` has been called: the feed has its last message. */
  get ended(): boolean {
    return this.last !== undefined;
  }

  /**
   * The feed's last message (the session closed): sent now when live, else
   * after the backlog and the buffer, so it still comes after every entry.
   */
  end(text: string): void {
    if (this.last !== undefined) return;
    this.last = text;
    if (this.live) this.peer.send(text);
  }

  /** The last seq this client has been sent. */
  get sentUpTo(): number {
    return this.lastSent;
  }

  /** A durable entry from the live feed. */
  offer(entry: Entry, text: string): void {
    if (this.live) this.deliver(entry, text);
    else this.buffer.push({ entry, text });
  }

  /**
   * Sends the backlog, then what was buffered meanwhile, and goes live.
   * `room` paces the sends (it resolves when the peer's send buffer has room,
   * false once the peer is gone), so a long backlog never floods a client;
   * entries that become durable meanwhile wait in the buffer. `onLive` runs
   * in the same tick as going live, so its sends are neither lost nor doubled.
   */
  async start(backlog: readonly Entry[], room: () => Promise<boolean>, onLive: () => void = () => undefined): Promise<void> {
    for (const e of backlog) {
      if (!(await room())) return;
      this.deliver(e, this.serialize(e));
    }
    while (this.buffer.length > 0) {
      const held = this.buffer;
      this.buffer = [];
      for (const { entry, text } of held) {
        if (!(await room())) return;
        this.deliver(entry, text);
      }
    }
    // No await between the empty-buffer check and going live: nothing can slip in between.
    this.live = true;
    onLive();
    if (this.last !== undefined) this.peer.send(this.last);
  }

  private deliver(entry: Entry, text: string): void {
    if (entry.seq <= this.lastSent) return;
    if (this.peer.send(text)) this.lastSent = entry.seq;
  }
}
