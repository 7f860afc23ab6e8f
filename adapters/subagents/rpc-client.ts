/**
 * The smallest JSON-RPC 2.0 client over a WebSocket that the `process`
 * provider needs to drive a child `bridle serve` (docs/protocol.md): calls
 * with ids, notifications by method, and one place that hears the
 * connection end. Written against the protocol page, not the server's code.
 */

export interface RpcError {
  code: number;
  message: string;
  data?: { reason?: string };
}

export class RpcCallError extends Error {
  override name = 'RpcCallError';
  constructor(
    readonly method: string,
    readonly error: RpcError,
  ) {
    super(`${method}: ${error.message}${error.data?.reason ? ` (${error.data.reason})` : ''}`);
  }
}

export interface RpcChannel {
  call<T = unknown>(method: string, params: Record<string, unknown>): Promise<T>;
  /** Every notification, as it arrives. */
  onNotification(f: (method: string, params: Record<string, unknown>) => void): void;
  /** Called once when the connection ends (closed by either side, or failed). */
  onClose(f: (why: string) => void): void;
  close(): void;
}

/** Contract: resolves once the socket is open, rejects if it cannot connect; calls pending when the socket ends reject. */
export async function connectRpc(url: string, token: string): Promise<RpcChannel> {
  // Loaded at the first child a session starts: a session that starts none does not load `ws` (ADR 0099).
  const { WebSocket } = await import('ws');
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, maxPayload: 64 * 1024 * 1024 });
  const pending = new Map<number, { method: string; resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const listeners: ((method: string, params: Record<string, unknown>) => void)[] = [];
  const closers: ((why: string) => void)[] = [];
  let ended: string | undefined;
  let next = 0;
  const end = (why: string) => {
    if (ended !== undefined) return;
    ended = why;
    for (const p of pending.values()) p.reject(new Error(`${p.method}: the connection to the child ended (${why})`));
    pending.clear();
    for (const f of closers) f(why);
  };
  ws.on('message', (data) => {
    let m: { id?: number; method?: string; params?: Record<string, unknown>; result?: unknown; error?: RpcError };
    try {
      m = JSON.parse(data.toString()) as typeof m;
    } catch {
      return;
    }
    if (typeof m.method === 'string') return void listeners.forEach((f) => f(m.method!, m.params ?? {}));
    if (typeof m.id !== 'number') return;
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error) p?.reject(new RpcCallError(p.method, m.error));
    else p?.resolve(m.result);
  });
  ws.on('close', (code) => end(`closed, ${code}`));
  ws.on('error', (err) => end(err.message));
  const channel: RpcChannel = {
    call: <T>(method: string, params: Record<string, unknown>) =>
      new Promise<T>((resolve, reject) => {
        if (ended !== undefined) return reject(new Error(`${method}: the connection to the child ended (${ended})`));
        const id = ++next;
        pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject });
        ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      }),
    onNotification: (f) => void listeners.push(f),
    onClose: (f) => void (ended !== undefined ? f(ended) : closers.push(f)),
    close: () => ws.close(),
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(channel));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`the child server refused the connection: HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}
