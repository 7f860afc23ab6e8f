/**
 * A minimal JSON-RPC 2.0 client over `ws`, written against docs/protocol.md
 * only (it imports nothing from the server): for tests and the fan-out bench.
 */
import { WebSocket } from 'ws';

export interface RpcMessage {
  jsonrpc: '2.0';
  id?: string | number | null;
  method?: string;
  params?: any;
  result?: any;
  error?: { code: number; message: string; data?: unknown };
}

export class RpcClient {
  readonly messages: RpcMessage[] = [];
  readonly raw: string[] = [];
  /** The method of each request sent, by id: to check responses against the protocol's result schemas. */
  readonly sent = new Map<string | number, string>();
  closed?: { code: number; reason: string };
  private nextId = 1;
  private waiters: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const text = data.toString();
      this.raw.push(text);
      const m = JSON.parse(text) as RpcMessage | RpcMessage[];
      for (const x of Array.isArray(m) ? m : [m]) this.messages.push(x);
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }

  static connect(url: string, opts: { token?: string; headers?: Record<string, string>; origin?: string } = {}): Promise<RpcClient> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    const ws = new WebSocket(url, { headers, origin: opts.origin, maxPayload: 64 * 1024 * 1024 });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new RpcClient(ws)));
      ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })));
      ws.once('error', reject);
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Resolves with the first message (already received or future) that matches; rejects after `ms`. */
  async waitFor(pred: (m: RpcMessage) => boolean, ms = 10_000, what = 'message'): Promise<RpcMessage> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.messages.find(pred);
      if (found) return found;
      if (this.closed) throw new Error(`connection closed (${this.closed.code} ${this.closed.reason}) while waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => (clearTimeout(t), r()));
      });
    }
  }

  async waitClosed(ms = 10_000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + ms;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error('timed out waiting for close');
      await new Promise<void>((r) => {
        const t = setTimeout(r, 50);
        this.waiters.push(() => (clearTimeout(t), r()));
      });
    }
    return this.closed;
  }

  sendRaw(text: string | Buffer): void {
    this.ws.send(text);
  }

  /** Sends a request and resolves with its whole response (result or error). */
  async request(method: string, params?: unknown): Promise<RpcMessage> {
    const id = this.nextId++;
    this.sent.set(id, method);
    this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }));
    return this.waitFor((m) => m.id === id && (m.result !== undefined || m.error !== undefined), 10_000, `response to ${method}`);
  }

  /** Sends a request; resolves with its result, rejects with its error. */
  async call<T = any>(method: string, params?: unknown): Promise<T> {
    const r = await this.request(method, params);
    if (r.error) throw Object.assign(new Error(`${method}: ${r.error.message}`), { rpc: r.error });
    return r.result as T;
  }

  notifications(method: string, sessionId?: string): any[] {
    return this.messages.filter((m) => m.method === method && (sessionId === undefined || m.params?.sessionId === sessionId)).map((m) => m.params);
  }

  /** The entries received for a session, in arrival order. */
  entries(sessionId?: string): any[] {
    return this.notifications('session/entry', sessionId).map((p) => p.entry);
  }

  close(): void {
    this.ws.close();
  }
}
