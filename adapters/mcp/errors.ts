/**
 * What can go wrong with an MCP server, by stable code. A call's failure is
 * a `ToolError` the executor turns into a call-linked error result; a start
 * that fails is an `McpStartError`, logged once (`mcp/server`, outcome
 * `failed`) and never more than that: the session goes on without its tools.
 */

/** The server answered the call with `isError: true`: the tool ran and failed, in its own words. */
export const MCP_TOOL_ERROR = 'MCP_TOOL_ERROR';
/** The server's process exited (or its connection closed); this call and every later one fail with it. */
export const MCP_SERVER_EXITED = 'MCP_SERVER_EXITED';
/** The server's answer was larger than one message may be (10 MiB over stdio): dropped, with its size; the connection and the server go on. */
export const MCP_RESULT_TOO_LARGE = 'MCP_RESULT_TOO_LARGE';
/** The server answered with a JSON-RPC error (an unknown tool, bad params, its own internal error). */
export const MCP_REQUEST_FAILED = 'MCP_REQUEST_FAILED';
/** The server's answer is not a call result (it fails the protocol's schema, or its declared output schema). */
export const MCP_BAD_RESULT = 'MCP_BAD_RESULT';
/** The request could not reach the server (a refused or dropped HTTP connection). */
export const MCP_UNREACHABLE = 'MCP_UNREACHABLE';
/** The server did not start: no such command, it exited, it did not answer `initialize` or `tools/list` in time, or answered them wrongly. */
export const MCP_START_FAILED = 'MCP_START_FAILED';

/** Another row already offers tools under this row's prefix (`mcp:a.b` and `mcp:a_b` are both `mcp__a_b__*`): the later row is refused. */
export const MCP_NAME_TAKEN = 'MCP_NAME_TAKEN';

export class McpStartError extends Error {
  override name = 'McpStartError';
  constructor(
    message: string,
    readonly code: typeof MCP_START_FAILED | typeof MCP_NAME_TAKEN = MCP_START_FAILED,
  ) {
    super(message);
  }
}
