/**
 * A local HTTP server speaking the OpenAI chat-completions streaming wire
 * format, scripted per request. Loopback only; for adapter tests and CLI e2e:
 *
 *   const srv = await startOpenAIServer();
 *   srv.enqueue(streamReply(textChunks('hello')));
 *   // bridle run --base-url ${srv.url} --model m
 *   expect(srv.requests[0].body.tools).toEqual(...);
 *   await srv.close();
 *
 * Replies come from the queue first, then from the `respondWith` handler;
 * with neither, the server answers 500 with a message saying so.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { usageChunk, textChunks, toolCallChunks, type WireChunk, type WireToolCall } from './openai-chunks.js';

const PAUSE = Symbol('pause');
const RAW = Symbol('raw');
/** A pause inside a stream's chunk list. */
export interface Pause { readonly [PAUSE]: number }
/** Text or bytes written to the socket as is (a malformed frame, a comment line, a recorded body cut anywhere). */
export interface Raw { readonly [RAW]: string | Uint8Array }
export type StreamItem = WireChunk | Pause | Raw;

export const pause = (ms: number): Pause => ({ [PAUSE]: ms });
export const raw = (text: string | Uint8Array): Raw => ({ [RAW]: text });
/** How long a stream's pauses add up to: the least time it takes to send. */
export const pausedMs = (items: readonly StreamItem[]): number =>
  items.reduce((ms, item) => ms + (PAUSE in (item as object) ? ((item as Pause)[PAUSE] as number) : 0), 0);

export type Reply =
  /** 200 + SSE: each item as `data: …\n\n`, then `data: [DONE]` unless `done: false`. */
  | { type: 'stream'; chunks: StreamItem[]; delayMs?: number; headersDelayMs?: number; done?: boolean }
  /** An HTTP error status with a JSON body (default `{ error: { message } }`). */
  | { type: 'error'; status: number; body?: unknown; headers?: Record<string, string> }
  /** 200 + SSE, writes `chunks`, then destroys the socket: a connection cut mid-stream. */
  | { type: 'drop'; chunks: StreamItem[]; delayMs?: number }
  /** Never answers (until the client gives up or the server closes). */
  | { type: 'hang' };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (`undefined` when the body was not JSON). */
  body: any;
}

export type Handler = (body: any, request: RecordedRequest) => Reply | Promise<Reply>;

export interface OpenAIServer {
  /** The base URL to give a client: `http://127.0.0.1:PORT/v1`. */
  readonly url: string;
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  enqueue(...replies: Reply[]): void;
  respondWith(handler: Handler): void;
  close(): Promise<void>;
}

export const streamReply = (chunks: StreamItem[], options: Omit<Extract<Reply, { type: 'stream' }>, 'type' | 'chunks'> = {}): Reply => ({
  type: 'stream',
  chunks,
  ...options,
});

export const errorReply = (status: number, message = `error ${status}`, extra: { code?: string; headers?: Record<string, string> } = {}): Reply => ({
  type: 'error',
  status,
  body: { error: { message, type: 'test_error', param: null, code: extra.code ?? null } },
  ...(extra.headers ? { headers: extra.headers } : {}),
});

const USAGE = usageChunk({ prompt_tokens: 10, completion_tokens: 5 });
/** A whole text answer with usage. */
export const textReply = (text: string): Reply => streamReply([...textChunks(text), USAGE]);
/** A whole tool-calling answer with usage. */
export const toolCallReply = (calls: WireToolCall[]): Reply => streamReply([...toolCallChunks(calls), USAGE]);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function writeItems(res: ServerResponse, items: StreamItem[], delayMs: number): Promise<void> {
  for (const item of items) {
    if (res.destroyed) return;
    if (PAUSE in item) {
      await sleep(item[PAUSE] as number);
      continue;
    }
    if (delayMs > 0) await sleep(delayMs);
    res.write(RAW in item ? (item[RAW] as string | Uint8Array) : `data: ${JSON.stringify(item)}\n\n`);
  }
}

const sseHead = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' };

async function send(reply: Reply, res: ServerResponse): Promise<void> {
  switch (reply.type) {
    case 'error': {
      const body = reply.body ?? { error: { message: `error ${reply.status}` } };
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify(body));
      return;
    }
    case 'hang':
      return;
    case 'drop':
      res.writeHead(200, sseHead);
      await writeItems(res, reply.chunks, reply.delayMs ?? 0);
      // Let the written frames reach the client before the cut.
      await sleep(20);
      res.socket?.destroy();
      return;
    case 'stream':
      if (reply.headersDelayMs) await sleep(reply.headersDelayMs);
      if (res.destroyed) return;
      res.writeHead(200, sseHead);
      await writeItems(res, reply.chunks, reply.delayMs ?? 0);
      if (reply.done !== false && !res.destroyed) res.write('data: [DONE]\n\n');
      res.end();
  }
}

/** Contract: listens on 127.0.0.1 (an ephemeral port) before resolving. */
export async function startOpenAIServer(): Promise<OpenAIServer> {
  const queue: Reply[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let handler: Handler | undefined;

  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const text = Buffer.concat(parts).toString('utf8');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
    requests.push(recorded);
    const reply =
      queue.shift() ??
      (handler ? await handler(body, recorded) : errorReply(500, 'openai-sse-server: no reply enqueued and no handler set'));
    await send(reply, res);
  };

  const server = createServer((req, res) => {
    onRequest(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `openai-sse-server: ${String(err)}` } }));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    enqueue: (...replies) => void queue.push(...replies),
    respondWith: (h) => void (handler = h),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
