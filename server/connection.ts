/**
 * One client connection: frames in (parsed, run in arrival order, answered),
 * notifications out. A bad message earns an error response and nothing else;
 * only a client too slow to read its notifications is cut off.
 */
import { WebSocket, type RawData } from 'ws';
import type { Peer } from './attachment.js';
import type { Hub } from './hub.js';
import { dispatch } from './methods.js';
import { parseFrame, runFrame } from './rpc.js';

export interface ConnectionOptions {
  /** Bytes a client may have waiting unread (beyond the message being sent) before it is disconnected. */
  maxBuffered: number;
  onProblem?: (message: string) => void;
}

/** Close codes this server sends (ws itself sends 1009 for an oversized message). */
export const CloseCode = { GoingAway: 1001, SlowConsumer: 1008 } as const;

export class Connection implements Peer {
  private dropped = false;
  private readonly attached = new Set<string>();
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly ws: WebSocket,
    private readonly hub: Hub,
    readonly label: string,
    private readonly opts: ConnectionOptions,
  ) {
    ws.on('message', (data, isBinary) => {
      this.queue = this.queue.then(() => this.handle(data, isBinary));
    });
    ws.on('close', () => {
      this.dropped = true;
      this.dispose();
    });
    // ws reports protocol violations (an oversized frame, bad UTF-8) here and then closes the socket itself.
    ws.on('error', (err) => this.opts.onProblem?.(`${label}: ${err.message}`));
  }

  private async handle(data: RawData, _isBinary: boolean): Promise<void> {
    if (this.dropped) return;
    const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
    const afters: (() => void | Promise<void>)[] = [];
    const frame = parseFrame(text);
    const out = await runFrame(frame, (method, params) =>
      dispatch(method, params, { hub: this.hub, peer: this, attached: this.attached, after: (fn) => afters.push(fn) }),
    );
    if (out !== undefined) this.send(JSON.stringify(out));
    for (const fn of afters) {
      try {
        await fn();
      } catch (err) {
        this.opts.onProblem?.(`${this.label}: ${String(err)}`);
      }
    }
  }

  send(text: string): boolean {
    if (this.dropped || this.ws.readyState !== WebSocket.OPEN) return false;
    // What is already waiting decides, so one large entry still goes to a client that keeps up.
    if (this.ws.bufferedAmount > this.opts.maxBuffered) {
      this.drop(`slow consumer: more than ${this.opts.maxBuffered} bytes unread`);
      return false;
    }
    this.ws.send(text);
    return true;
  }

  async room(): Promise<boolean> {
    const low = this.opts.maxBuffered / 2;
    while (!this.dropped && this.ws.readyState === WebSocket.OPEN && this.ws.bufferedAmount > low) {
      await new Promise((r) => setTimeout(r, 5));
    }
    return !this.dropped && this.ws.readyState === WebSocket.OPEN;
  }

  /** Disconnects with a reason; a client that does not read gets cut off after a grace period. */
  drop(reason: string, code: number = CloseCode.SlowConsumer): void {
    if (this.dropped) return;
    this.dropped = true;
    this.dispose();
    this.opts.onProblem?.(`${this.label}: disconnected: ${reason}`);
    try {
      this.ws.close(code, reason.slice(0, 120));
    } catch {
      // already closing
    }
    setTimeout(() => this.ws.terminate(), 1000).unref();
  }

  private dispose(): void {
    for (const id of this.attached) this.hub.detach(id, this);
    this.attached.clear();
  }
}
