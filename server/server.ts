/**
 * `startServer`: the WebSocket JSON-RPC server behind `bridle serve`, and the
 * viewer's static page on the same port. Every connection needs the token;
 * a browser's Origin must be the server's own; messages and unread output are
 * bounded. A hostile client can lose its own connection, never the server.
 */
import { createServer, STATUS_CODES, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { InspectionEvent, Observer } from 'xstate';
import { checkAccess, ownOrigins, type AccessPolicy } from './access.js';
import { CloseCode, Connection } from './connection.js';
import type { HostedSession, OpenSession, ReopenSession } from './hosted-session.js';
import { ownedSession } from './owned-session.js';
import type { SessionRelay } from '../ports/relay.js';
import { allowedRoots } from './allowed-cwd.js';
import { Hub } from './hub.js';
import { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_SESSIONS, type ForkLog } from './hub-limits.js';
import { serveStatic, type ViewerFiles } from './static.js';
import { startSweep } from './sweep.js';
import type { UsageOf } from './usage.js';

export interface ServerOptions {
  open: OpenSession;
  /** Opens a session of the store this process does not hold, on attach or input (`bridle serve`: repaired and resumed); absent: only sessions created here. */
  reopen?: ReopenSession;
  /**
   * Many workers on one shared store (ADR 0030, 0050): a session another live worker runs is relayed to this
   * server's clients, what they ask of it is forwarded to its owner, and every session this server runs takes
   * what other workers forward to it. One relay may serve every `startServer()` of a process; the embedder
   * closes it after them. Absent: a session held elsewhere is refused `SESSION_LOCKED`.
   */
  relay?: SessionRelay;
  token: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 7077; 0 picks a free port. */
  port?: number;
  /** Browser origins allowed besides the server's own. */
  allowOrigins?: readonly string[];
  /** Largest message a client may send, in bytes (default 1 MiB). A bigger one closes that connection (1009). */
  maxPayload?: number;
  /** Unread bytes a client may have waiting before it is disconnected (default 8 MiB). */
  maxBuffered?: number;
  /** Most sessions open at once (default 64); `session/create` beyond it gets `SESSION_LIMIT` (-32005). */
  maxSessions?: number;
  /** A session with no attached client and no running turn is closed after this long (default 15 minutes); 0: never. It stays on disk. */
  idleTimeoutMs?: number;
  /**
   * Directories a client may name as `session/create`'s `cwd` (each, and
   * anything below it). Default none: a client cannot choose, and `open`
   * picks the workspace. Each must exist (`startServer` rejects otherwise).
   */
  allowCwd?: readonly string[];
  viewer?: ViewerFiles;
  inspect?: Observer<InspectionEvent>;
  onProblem?: (message: string) => void;
  /** Writes a fork for `session/fork` (ADR 0029); without it the method is refused (`FORK_UNAVAILABLE`). */
  fork?: ForkLog;
  /** With `relay` and `reopen`: every how many ms the lease sweep (ADR 0034) takes over sessions whose dead owner left work, with nobody asking. Absent or 0: no sweep. */
  sweepMs?: number;
  /** What a session's tree has cost so far, for `session/cost` (ADR 0048); absent: `cost` is null. */
  usage?: UsageOf;
}

export interface BridleServer {
  readonly host: string;
  readonly port: number;
  /** `ws://host:port/` */
  readonly url: string;
  /** `http://host:port/`, the viewer. */
  readonly httpUrl: string;
  readonly origins: readonly string[];
  readonly hub: Hub;
  /** Contract: closes every connection and session (logs flushed, open approvals left open); idempotent. */
  close(): Promise<void>;
}

export const DEFAULT_PORT = 7077;
export const DEFAULT_MAX_PAYLOAD = 1024 * 1024;
export const DEFAULT_MAX_BUFFERED = 8 * 1024 * 1024;

function refuse(socket: Duplex, status: 401 | 403, reason: string): void {
  const body = `${reason}\n`;
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

const urlHost = (h: string) => (h.includes(':') ? `[${h}]` : h);

/** Contract: resolves once listening; rejects if the port cannot be bound or an `allowCwd` directory does not exist. */
export async function startServer(o: ServerOptions): Promise<BridleServer> {
  const host = o.host ?? '127.0.0.1';
  const onProblem = o.onProblem ?? (() => undefined);
  const relay = o.relay;
  const hub = new Hub(o.open, onProblem, o.inspect, {
    maxSessions: o.maxSessions ?? DEFAULT_MAX_SESSIONS,
    idleTimeoutMs: o.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    cwdRoots: allowedRoots(o.allowCwd ?? []),
    ...(o.reopen ? { reopen: o.reopen } : {}),
    ...(relay ? { relay: (sessionId: string) => relay.source(sessionId), adopt: (hosted: HostedSession) => relay.adopt(ownedSession(hosted), onProblem) } : {}),
    ...(o.usage ? { usage: o.usage } : {}),
  }, o.fork);
  const wss = new WebSocketServer({ noServer: true, maxPayload: o.maxPayload ?? DEFAULT_MAX_PAYLOAD });
  const http = createServer((req, res) => void serveStatic(req, res, o.viewer));
  const policy: { current?: AccessPolicy } = {};
  let clients = 0;
  const connections = new Set<Connection>();

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const verdict = checkAccess(req.headers, req.url, policy.current!);
    if (!verdict.ok) return refuse(socket, verdict.status, verdict.reason);
    wss.handleUpgrade(req, socket, head, (ws) => {
      const c = new Connection(ws, hub, `client-${++clients}`, { maxBuffered: o.maxBuffered ?? DEFAULT_MAX_BUFFERED, onProblem });
      connections.add(c);
      ws.on('close', () => connections.delete(c));
    });
  });
  http.on('clientError', (_err, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(o.port ?? DEFAULT_PORT, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  const origins = [...ownOrigins(host, port), ...(o.allowOrigins ?? [])];
  policy.current = { token: o.token, origins: new Set(origins) };

  const stopSweep = relay && o.reopen && (o.sweepMs ?? 0) > 0 ? startSweep(hub, { everyMs: o.sweepMs!, ...relay.sweep() }, onProblem) : () => undefined;
  let closing: Promise<void> | undefined;
  return {
    host,
    port,
    url: `ws://${urlHost(host)}:${port}/`,
    httpUrl: `http://${urlHost(host)}:${port}/`,
    origins,
    hub,
    close: () =>
      (closing ??= (async () => {
        stopSweep();
        for (const c of connections) c.drop('server stopping', CloseCode.GoingAway);
        await hub.close();
        await new Promise<void>((r) => wss.close(() => r()));
        http.closeAllConnections();
        await new Promise<void>((r) => http.close(() => r()));
      })()),
  };
}
