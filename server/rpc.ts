/**
 * JSON-RPC 2.0 framing: one text frame in, the calls it holds (or the error
 * responses it earns) out, and the responses of a batch gathered back.
 * Pure except for running the handler; nothing a client sends can throw out.
 */
import { z } from 'zod';
import { ErrorCode, errorResponse, isMethod, MethodParams, response, RpcFailure, RpcRequest, type Method, type RequestId } from './protocol.js';

export type Item =
  | { kind: 'reply'; response: object }
  | { kind: 'call'; id: RequestId; notify: boolean; method: Method; params: unknown };

export interface ParsedFrame {
  batch: boolean;
  items: Item[];
}

const reply = (id: RequestId, code: number, message: string, data?: unknown): Item => ({
  kind: 'reply',
  response: errorResponse(id, data === undefined ? { code, message } : { code, message, data }),
});

/** The id to answer an invalid request with: its own when it has a usable one, else null. */
function idOf(value: unknown): RequestId {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const id = (value as { id?: unknown }).id;
    if (typeof id === 'string' || typeof id === 'number') return id;
  }
  return null;
}

function parseItem(value: unknown): Item | undefined {
  const req = RpcRequest.safeParse(value);
  if (!req.success) return reply(idOf(value), ErrorCode.InvalidRequest, 'Invalid Request', req.error.issues);
  const { method, params, id } = req.data;
  const notify = id === undefined;
  const rid = id ?? null;
  if (!isMethod(method)) return notify ? undefined : reply(rid, ErrorCode.MethodNotFound, `Method not found: ${method}`);
  if (Array.isArray(params)) return notify ? undefined : reply(rid, ErrorCode.InvalidParams, 'Invalid params: pass params by name (an object)');
  const parsed = MethodParams[method].safeParse(params ?? {});
  if (!parsed.success) return notify ? undefined : reply(rid, ErrorCode.InvalidParams, `Invalid params: ${z.prettifyError(parsed.error)}`, parsed.error.issues);
  return { kind: 'call', id: rid, notify, method, params: parsed.data };
}

/** Contract: pure and total; never throws, whatever `text` holds. */
export function parseFrame(text: string): ParsedFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { batch: false, items: [reply(null, ErrorCode.ParseError, `Parse error: ${(err as Error).message}`)] };
  }
  if (!Array.isArray(value)) {
    const item = parseItem(value);
    return { batch: false, items: item ? [item] : [] };
  }
  if (value.length === 0) return { batch: false, items: [reply(null, ErrorCode.InvalidRequest, 'Invalid Request: empty batch')] };
  return { batch: true, items: value.map(parseItem).filter((i): i is Item => i !== undefined) };
}

export type Handler = (method: Method, params: unknown) => unknown;

/**
 * Runs the calls of a frame in order and returns what to send back: one
 * response, an array for a batch, or nothing when every item was a notification.
 * Contract: never rejects; a handler's throw becomes an error response.
 */
export async function runFrame(frame: ParsedFrame, handle: Handler): Promise<object | object[] | undefined> {
  const out: object[] = [];
  for (const item of frame.items) {
    if (item.kind === 'reply') {
      out.push(item.response);
      continue;
    }
    try {
      const result = await handle(item.method, item.params);
      if (!item.notify) out.push(response(item.id, result));
    } catch (err) {
      if (item.notify) continue;
      if (err instanceof RpcFailure) out.push(errorResponse(item.id, err.data === undefined ? { code: err.code, message: err.message } : { code: err.code, message: err.message, data: err.data }));
      else out.push(errorResponse(item.id, { code: ErrorCode.InternalError, message: `Internal error: ${(err as Error)?.message ?? String(err)}` }));
    }
  }
  if (out.length === 0) return undefined;
  return frame.batch ? out : out[0];
}
