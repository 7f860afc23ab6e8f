/**
 * What the ACP agent refuses in a request's params, as a named
 * `RequestError` the client may read: JSON-RPC `code`, bridle's `reason` in
 * `data`.
 */
import { RequestError, type McpServer } from '@agentclientprotocol/sdk';
import { parseTraceparent } from '../../log/trace.js';
import type { Row } from '../../plugins/rows.js';
import { McpServerError, mcpServerRows } from './mcp-rows.js';

export const INVALID_PARAMS = -32602;
/** `bridle serve`'s code for a session it cannot open or remove (`ErrorCode.CreateFailed`, a claim another process holds): the same refusal reads the same on both hosts. */
export const CANNOT_OPEN = -32003;
/** A session id names a log in `$BRIDLE_HOME/sessions/`, never a path. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A refusal the client may read: JSON-RPC `code`, bridle's `reason` in `data`. */
export function acpRefusal(code: number, reason: string, message: string): RequestError {
  return new RequestError(code, message, { reason });
}

export function checkedId(id: string): string {
  if (!SESSION_ID.test(id)) throw acpRefusal(INVALID_PARAMS, 'BAD_SESSION_ID', `not a bridle session id: ${JSON.stringify(id).slice(0, 200)}`);
  return id;
}

/** The client's `cwd`, or `defaultCwd` when it sent an empty one; refused unless absolute. */
export function absoluteCwd(given: string, defaultCwd: string | undefined): string {
  const cwd = given === '' && defaultCwd ? defaultCwd : given;
  if (!cwd.startsWith('/')) throw acpRefusal(INVALID_PARAMS, 'BAD_CWD', `cwd must be an absolute path (got ${JSON.stringify(cwd).slice(0, 200)})`);
  return cwd;
}

/** The client's MCP servers as rows; a server the rows cannot say is refused (`BAD_MCP_SERVER`). */
export function rowsOf(servers: readonly McpServer[]): Row[] {
  try {
    return mcpServerRows(servers);
  } catch (err) {
    if (err instanceof McpServerError) throw acpRefusal(INVALID_PARAMS, 'BAD_MCP_SERVER', err.message);
    throw err;
  }
}

/** A client's trace context rides in `_meta` (the protocol's extension point), under the W3C header's name. */
export function metaTraceparent(meta: unknown): { traceparent?: string } {
  const t = meta && typeof meta === 'object' ? (meta as Record<string, unknown>).traceparent : undefined;
  return typeof t === 'string' && parseTraceparent(t) ? { traceparent: t.trim() } : {};
}
