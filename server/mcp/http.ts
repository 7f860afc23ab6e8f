/**
 * `bridle mcp --http`: the MCP server over streamable HTTP, on `node:http`,
 * at `/mcp`. In front of the SDK's handler, as `bridle serve` does it
 * (`server/access.ts`): a bearer token on every request (401 without it), a
 * browser's `Origin` only when it is the server's own (403), and, on a
 * loopback bind, a `Host` that names loopback (403: DNS rebinding). The
 * handler is web-standard (`Request` → `Response`); the bridge to Node's
 * request and response is here, with the request's signal aborted when the
 * client goes away before its answer, which cancels the call.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { hostHeaderValidationResponse, isInitializeRequest, isLegacyRequest, localhostAllowedHostnames, readRequestBody, type McpHttpHandler } from '@modelcontextprotocol/server';
import { checkAccess, isLoopbackHost, ownOrigins } from '../access.js';

export interface McpHttpOptions {
  host: string;
  port: number;
  token: string;
  handler: McpHttpHandler;
  onProblem?: (message: string) => void;
}

export interface McpHttpServer {
  /** `http://host:port/mcp`. */
  url: string;
  close(): Promise<void>;
}

export const MCP_PATH = '/mcp';
/**
 * The caller's identity (ADR 0089): a 2025 caller's `initialize` is answered with a fresh one, which the client keeps
 * and sends on every later request, its `notifications/cancelled` included. A 2026-07-28 request gets none: it has
 * no `initialize`, and its cancel is its own connection closing.
 */
export const MCP_CALLER_HEADER = 'mcp-session-id';

function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json', ...(status === 401 ? { 'www-authenticate': 'Bearer' } : {}) });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message } }));
}

/** Node's request as a web `Request`; its signal aborts when the client closes the connection before the answer is out. */
function toRequest(req: IncomingMessage, res: ServerResponse, base: string): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
  }
  const gone = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) gone.abort(new Error('the client closed the connection'));
  });
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(new URL(req.url ?? '/', base), {
    method: req.method ?? 'GET',
    headers,
    signal: gone.signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
  } as RequestInit);
}

/**
 * Whether a POST is a 2025 caller's `initialize` (the SDK's classifier: no 2026-07-28 envelope claim), read from a
 * clone so the request stays whole for the handler. Contract: never throws; a body it cannot read or parse is no.
 */
async function isLegacyInitialize(request: Request): Promise<boolean> {
  const read = await readRequestBody(request.clone()).catch(() => undefined);
  if (!read || read.tooLarge) return false;
  let body: unknown;
  try {
    body = JSON.parse(read.text);
  } catch {
    return false;
  }
  return isInitializeRequest(body) && (await isLegacyRequest(request, body).catch(() => false));
}

async function sendResponse(res: ServerResponse, answer: Response, caller?: string): Promise<void> {
  const headers: Record<string, string | string[]> = caller ? { [MCP_CALLER_HEADER]: caller } : {};
  answer.headers.forEach((v, k) => {
    headers[k] = k === 'set-cookie' ? answer.headers.getSetCookie() : v;
  });
  res.writeHead(answer.status, headers);
  if (!answer.body) return void res.end();
  // An SSE stream is written as it comes, each frame at once.
  res.flushHeaders();
  const reader = answer.body.getReader();
  res.on('close', () => void reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } finally {
    res.end();
  }
}

/** Contract: binds only where told (the caller refuses a non-loopback host without its flag); every request without the token is answered 401. */
export async function startMcpHttp(o: McpHttpOptions): Promise<McpHttpServer> {
  const loopback = isLoopbackHost(o.host);
  let base = '';
  const allowedHosts = localhostAllowedHostnames();
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path !== MCP_PATH) return refuse(res, 404, `not found: the MCP endpoint is ${MCP_PATH}`);
    const access = checkAccess(req.headers, req.url, { token: o.token, origins: new Set(ownOrigins(o.host, (server.address() as AddressInfo).port)) });
    if (!access.ok) return refuse(res, access.status, access.reason);
    const request = toRequest(req, res, base);
    const rebound = loopback ? hostHeaderValidationResponse(request, allowedHosts) : undefined;
    if (rebound) return void sendResponse(res, rebound);
    const initialize = req.method === 'POST' && !req.headers[MCP_CALLER_HEADER] ? isLegacyInitialize(request) : Promise.resolve(false);
    Promise.all([o.handler.fetch(request), initialize])
      .then(([answer, fresh]) => sendResponse(res, answer, fresh && !answer.headers.has(MCP_CALLER_HEADER) ? randomUUID() : undefined))
      .catch((err: unknown) => {
        o.onProblem?.(`mcp http: ${(err as Error)?.message ?? String(err)}`);
        if (!res.headersSent) refuse(res, 500, 'internal error');
        else res.end();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shown = o.host.includes(':') ? `[${o.host}]` : o.host;
  base = `http://${shown}:${port}`;
  return {
    url: `${base}${MCP_PATH}`,
    close: async () => {
      await o.handler.close().catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
