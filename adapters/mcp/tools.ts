/**
 * An MCP server's tools as bridle tools: `mcp__<server>__<tool>`, the
 * server's JSON Schema as the parameters (checked through zod like any
 * plain JSON Schema, I4). A server runs outside the sandbox, so its
 * `readOnlyHint: true` is taken only when the row says `trusted: true`;
 * otherwise, and for any tool without the hint, a call asks like a write
 * and is refused under `never`, saying why (ADR 0039). A tool whose
 * name the wire would refuse, or whose schema cannot be read, is left out
 * with a line saying why, rather than breaking every request.
 */
import type { ToolContext, ToolDefinition, ToolOutput } from '../../ports/tools.js';
import { checkerOf, wireSchema } from '../../tools/schema.js';

/** What `tools/list` says of one tool, as far as bridle reads it. */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean; title?: string };
  /** Whether the server runs its calls as tasks (`tasks.ts`). */
  execution?: { taskSupport?: 'required' | 'optional' | 'forbidden' };
}

/** What a call brings beside its arguments: whom the server's questions go to, where its progress goes, its trace context. */
export interface McpCallContext {
  ask?: ToolContext['ask'];
  progress?: ToolContext['progress'];
  /** The W3C trace context of the call's span, sent as `_meta.traceparent` (ADR 0065). */
  traceparent?: string;
}

/** Calls one tool of the server; resolves with its output, rejects with a `ToolError` (server gone, timeout, protocol). */
export type CallMcpTool = (tool: string, args: unknown, signal: AbortSignal, ctx?: McpCallContext) => Promise<ToolOutput>;

/** What OpenAI-compatible APIs accept as a function name. */
const WIRE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const PRESENT_CHARS = 200;

/** A server's name as a tool prefix: the row id after `mcp:`, anything the wire refuses as `_`. */
export function serverName(rowId: string): string {
  const bare = rowId.startsWith('mcp:') ? rowId.slice(4) : rowId;
  return bare.replace(/[^A-Za-z0-9_-]/g, '_') || '_';
}

/** Contract: pure; `mcp__<server>__<tool>`, with what the wire refuses as `_`. */
export function bridleToolName(rowId: string, tool: string): string {
  return `mcp__${serverName(rowId)}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

/** Why an MCP call is a write for approval: its server is not confined, and not vouched for. */
function writeReason(name: string, rowId: string, hinted: boolean): string {
  const not = hinted ? ` and its row does not say trusted: true, so its readOnlyHint is not taken` : '';
  return `${name} is a tool of the MCP server ${rowId}, which runs outside the sandbox${not}`;
}

/** Contract: pure but for `call`, which only the tools' `execute` invokes; never throws. */
export function bridleTools(
  rowId: string,
  listed: readonly McpToolInfo[],
  call: CallMcpTool,
  timeoutMs: number,
  o: { trusted: boolean; traceparentOf?: (callId: string) => string | undefined } = { trusted: false },
): { tools: ToolDefinition[]; problems: string[] } {
  const tools: ToolDefinition[] = [];
  const problems: string[] = [];
  const taken = new Map<string, string>();
  for (const info of listed) {
    const name = bridleToolName(rowId, info.name);
    const shown = JSON.stringify(info.name);
    if (!WIRE_NAME.test(name)) {
      problems.push(`${shown} left out: ${name} is longer than the 64 characters a model API accepts as a tool name`);
      continue;
    }
    if (taken.has(name)) {
      problems.push(`${shown} left out: it is ${name} once its name is made safe for the wire, as ${JSON.stringify(taken.get(name))} already is`);
      continue;
    }
    // Checked as the model is shown it, without `$schema`: replay rebuilds the check from the logged wire form, so both read one schema.
    const parameters = wireSchema(info.inputSchema);
    try {
      checkerOf(parameters);
    } catch (err) {
      problems.push(`${shown} left out: its input schema cannot be checked (${err instanceof Error ? err.message : String(err)})`);
      continue;
    }
    taken.set(name, info.name);
    const hinted = info.annotations?.readOnlyHint === true;
    const readOnly = hinted && o.trusted;
    const server = serverName(rowId);
    tools.push({
      name,
      description: info.description ?? info.title ?? info.annotations?.title ?? `The ${info.name} tool of the MCP server ${server}.`,
      parameters,
      readOnly,
      ...(readOnly ? {} : { writeReason: writeReason(name, rowId, hinted) }),
      idempotent: hinted || info.annotations?.idempotentHint === true,
      timeoutMs,
      present: (args: unknown) => clip(`${server}: ${info.name} ${JSON.stringify(args) ?? ''}`, PRESENT_CHARS),
      execute: (args: unknown, ctx: ToolContext) => {
        const traceparent = ctx.callId !== undefined ? o.traceparentOf?.(ctx.callId) : undefined;
        return call(info.name, args, ctx.signal, { ...(ctx.ask ? { ask: ctx.ask } : {}), ...(ctx.progress ? { progress: ctx.progress } : {}), ...(traceparent ? { traceparent } : {}) });
      },
    });
  }
  return { tools, problems };
}
