/**
 * One MCP server, spoken to through the official SDK's v2 client
 * (`@modelcontextprotocol/client`, ADR 0054): started (a process over
 * stdio, or a streamable HTTP endpoint), its protocol revision negotiated
 * (2026-07-28 where the server offers it, else the 2025 `initialize`
 * handshake), its tools listed once, then called. A call's failure is a
 * `ToolError` with a stable code (`errors.ts`); once a stdio server's
 * process is gone, every later call fails at once with `MCP_SERVER_EXITED`
 * instead of waiting for its deadline. An answer larger than one message
 * may be (10 MiB) is `MCP_RESULT_TOO_LARGE` with its size, and the
 * connection goes on (`stdio-transport.ts`, `read-buffer.ts`). The tool list
 * is read at the start; a server that announces a changed list has it read
 * again by the SDK, and `onToolsChanged` hands it on (the plugin offers it
 * from the next step on).
 *
 * The start has its own deadline, and nothing of it outlives the start:
 * the spec forbids cancelling `initialize`, and a request already answered
 * has nothing to cancel, so neither the deadline passing later nor the
 * session closing sends `notifications/cancelled` (issue 23).
 *
 * A server's input request during a call (`elicitation/create`, pushed on a
 * 2025 connection, embedded in an `input_required` result on 2026-07-28 and
 * fulfilled by the SDK) is asked of the session through the call's `ask`
 * (ADR 0065); a call sends a progress token, and the server's progress
 * reaches the call's `progress`; a tool the server runs as a task is called as one, polled and cancelled
 * (`tasks.ts`, ADR 0076); on 2026-07-28, a server that declares the tasks
 * extension has it declared back, and a call it answers with a task is
 * followed to its end (`tasks-extension.ts`, ADR 0084); a session's `traceparent` goes to a stdio
 * server as `TRACEPARENT` and with each call in `_meta.traceparent`.
 *
 * This file is the only one that loads the SDK's client; the plugin imports
 * it when a row asks for a server, so sessions without MCP rows never load it.
 */
import { readFileSync } from 'node:fs';
import { Client, ProtocolError, SdkError, SdkErrorCode, SdkHttpError, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { ToolError } from '../../ports/tool-error.js';
import type { ToolOutput } from '../../ports/tools.js';
import { elicitResult, questionOf } from './elicitation.js';
import { isStdio, type McpConfig } from './config.js';
import { capText, resultText, type McpResultLike } from './content.js';
import { MCP_BAD_RESULT, MCP_REQUEST_FAILED, MCP_RESULT_TOO_LARGE, MCP_SERVER_EXITED, MCP_TOOL_ERROR, MCP_UNREACHABLE, McpStartError } from './errors.js';
import { redactText, redactUrl } from '../../safety/redact.js';
import { MAX_MESSAGE_BYTES, RESULT_TOO_LARGE_RPC_CODE } from './read-buffer.js';
import { CappedStdioTransport } from './stdio-transport.js';
import { callAsTask, isTaskTool, type TaskClient } from './tasks.js';
import { increasingProgress } from './progress.js';
import { followTask, tapForTasks, taskOf, TaskProtocolError } from './tasks-extension.js';
import { declaresTasksExtension } from '../../ports/mcp-tasks.js';
import type { CallMcpTool, McpCallContext, McpToolInfo } from './tools.js';
import { ToolResultCode } from '../../log/codes.js';

export interface McpConnection {
  /** The tools the server listed at the start. */
  readonly tools: readonly McpToolInfo[];
  /** The server's own name and version, as `initialize` or `server/discover` reported them. */
  readonly serverInfo?: { name: string; version: string };
  /** The protocol revision the two sides settled on (`2026-07-28`, or a 2025 revision for an older server). */
  readonly protocolVersion?: string;
  /** Whether both sides declared the tasks extension (`io.modelcontextprotocol/tasks`, ADR 0084): its calls may be answered with tasks. */
  readonly tasksExtension?: boolean;
  readonly call: CallMcpTool;
  /**
   * Called with the server's new tool list each time it announces a change (`notifications/tools/list_changed`,
   * the list read again by the SDK, debounced). Returns the unsubscriber.
   */
  onToolsChanged(listener: (tools: readonly McpToolInfo[]) => void): () => void;
  /** Contract: idempotent, never rejects; a stdio server's process has ended when it resolves (stdin closed, then SIGTERM, then SIGKILL). */
  close(): Promise<void>;
}

const MAX_TIMER_MS = 2 ** 31 - 1;
const MAX_PAGES = 100;
const STDERR_KEPT = 4096;
const STDERR_SHOWN = 600;
const MESSAGE_CHARS = 2000;
/** How long a stdio server may stay silent on `server/discover` before it is taken for a 2025 server. */
const PROBE_TIMEOUT_MS = 3000;
/** Past the transport's 2 s + 2 s before SIGKILL. */
const SHUTDOWN_WAIT_MS = 5000;

function bridleVersion(): string {
  for (const up of ['../../../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'bridle' && pkg.version) return pkg.version;
    } catch {}
  }
  return '0.0.0';
}

const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB (${bytes} bytes)`;
const isTooLarge = (data: unknown): data is { bytes: number } =>
  typeof data === 'object' && data !== null && (data as { bridle?: unknown }).bridle === MCP_RESULT_TOO_LARGE && typeof (data as { bytes?: unknown }).bytes === 'number';
// What a server or the SDK says may quote a URL with its token, or a header: shown redacted (ADR 0039).
const describe = (err: unknown) => redactText(err instanceof Error ? err.message : String(err));
const isSchemaFailure = (err: unknown) => Array.isArray((err as { issues?: unknown } | null)?.issues);
const withStatus = (message: string, status: number | undefined) => (status === undefined || message.includes(`HTTP ${status}`) ? message : `${message} (HTTP ${status})`);
const httpStatus = (err: SdkHttpError): number | undefined => {
  const status = (err.data as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' ? status : undefined;
};

export interface ConnectOptions {
  /** The row id, `mcp:<name>`: named in every message. */
  id: string;
  /** Where a stdio server runs: the session's workspace. */
  cwd: string;
  /** Aborts the start (the session closed meanwhile). */
  signal: AbortSignal;
  /** The session's W3C trace context, when it has one: a stdio server gets it as `TRACEPARENT` (a row's own `env` wins). */
  traceparent?: string;
}

/**
 * Starts the server and lists its tools.
 * Contract: resolves with a live connection, or rejects with `McpStartError` (code `MCP_START_FAILED`)
 * saying what happened, after stopping whatever it started.
 */
export async function connectMcp(config: McpConfig, o: ConnectOptions): Promise<McpConnection> {
  let stderr = '';
  const lastWords = () => {
    const t = stderr.trim();
    return t ? ` Its last words on stderr: ${redactText(t.length > STDERR_SHOWN ? `…${t.slice(-STDERR_SHOWN)}` : t)}` : '';
  };
  // The calls waiting for an answer: failed at once when an answer too large, of no readable request, was dropped.
  const inFlight = new Set<(bytes: number) => void>();
  let stdio: CappedStdioTransport | undefined;
  const transportFor = (): Transport => {
    if (!isStdio(config)) return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers ?? {} } });
    const env = { ...(o.traceparent ? { TRACEPARENT: o.traceparent } : {}), ...(config.env ?? {}) };
    stdio = new CappedStdioTransport({ command: config.command, args: config.args ?? [], env, cwd: o.cwd }, (bytes) => {
      for (const fail of inFlight) fail(bytes);
    });
    // Read, so a chatty server never blocks on a full pipe; kept, so its last words can explain an exit.
    stdio.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT)));
    return stdio;
  };
  // `auto`: `server/discover` first, the 2025 `initialize` for a server that refuses it or, over stdio, stays silent
  // past the probe's deadline (some 2025 servers never answer a request before `initialize`) (ADR 0054).
  const probe = { timeoutMs: Math.min(PROBE_TIMEOUT_MS, config.startTimeoutMs) };
  const changed = new Set<(tools: readonly McpToolInfo[]) => void>();
  /** The tools as last listed (`tools`, once listed): whether a call goes as a task is read from its tool's listing. */
  let listedNow: readonly McpToolInfo[] = [];
  // A list read again that failed is not news: the tools offered stay as they were.
  const onChanged = (err: Error | null, listed: unknown[] | null) => {
    if (err || !listed || closing || gone) return;
    listedNow = listed as McpToolInfo[];
    for (const l of changed) l(listed as McpToolInfo[]);
  };
  const client = new Client(
    { name: 'bridle', version: bridleVersion() },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto', probe }, listMaxPages: MAX_PAGES, listChanged: { tools: { onChanged } } },
  );
  // The calls running, for a server's input request to find the one it belongs to (ADR 0065).
  const running = new Set<McpCallContext>();
  client.setRequestHandler('elicitation/create', async (request, ctx) => {
    const question = questionOf(o.id, request.params);
    const calls = [...running];
    // Neither era says which call asks: bridle asks for the one call running, and declines when it cannot tell.
    if (calls.length !== 1 || !calls[0]!.ask) return { action: 'decline' };
    return elicitResult(await calls[0]!.ask(question, ctx.mcpReq.signal));
  });
  let gone: string | undefined;
  let closing: Promise<void> | undefined;
  client.onclose = () => {
    if (!closing) gone ??= 'exited';
  };
  // A line on stdout that is not JSON-RPC, a failed notification stream: the SDK reports and goes on, and so does bridle.
  client.onerror = () => undefined;
  // The transport closes stdin, waits, then SIGTERM, then SIGKILL (the MCP spec's shutdown); a start that failed may have begun that already.
  const close = () =>
    (closing ??= (async () => {
      await client.close().catch(() => undefined);
      if (stdio?.spawned) await Promise.race([stdio.ended, new Promise((r) => setTimeout(r, SHUTDOWN_WAIT_MS).unref())]);
    })());

  // The start's own deadline and the session's signal, both let go of once the start is over: a signal still tied
  // to `initialize` or `tools/list` would, when it fired later, cancel requests long answered.
  const starting = new AbortController();
  const timer = setTimeout(() => starting.abort(new Error('start deadline')), config.startTimeoutMs);
  const onSession = () => starting.abort(o.signal.reason);
  if (o.signal.aborted) onSession();
  else o.signal.addEventListener('abort', onSession, { once: true });
  const startOptions = { signal: starting.signal, timeout: config.startTimeoutMs };
  const tools: McpToolInfo[] = [];
  let extensionTasks = false;
  try {
    const tap = tapForTasks(transportFor());
    await client.connect(tap.transport, startOptions);
    // The tasks extension (ADR 0084): declared back to a 2026-07-28 server that declares it, and only to one.
    if (declaresTasksExtension(client.getServerCapabilities()) && client.getProtocolEra() === 'modern') {
      tap.enable();
      extensionTasks = true;
    }
    if (client.getServerCapabilities()?.tools) tools.push(...((await client.listTools(undefined, startOptions)).tools as McpToolInfo[]));
    listedNow = tools;
  } catch (err) {
    await close();
    const why = startFailure(err, config, { sessionClosed: o.signal.aborted, pastDeadline: starting.signal.aborted, neverSpawned: stdio !== undefined && !stdio.pid });
    throw new McpStartError(`the MCP server ${o.id} did not start: ${why}.${lastWords()}`);
  } finally {
    clearTimeout(timer);
    o.signal.removeEventListener('abort', onSession);
  }

  const serverInfo = client.getServerVersion();
  const exited = (during: boolean) =>
    new ToolError(MCP_SERVER_EXITED, `The MCP server ${o.id} ${gone === 'exited' ? 'exited' : 'closed its connection'}${during ? ' during this call' : ''}; its tools are unavailable for the rest of this session.${lastWords()}`);

  const tooLarge = (tool: string, bytes: number, sure: boolean) =>
    new ToolError(
      MCP_RESULT_TOO_LARGE,
      `The MCP server ${o.id} answered ${sure ? `the ${tool} call` : `a call (the ${tool} call is one of those waiting; which, its answer did not say)`} with ${megabytes(bytes)}, more than the ${megabytes(MAX_MESSAGE_BYTES)} one message may be: the answer was dropped. The server is still running and its tools are still available; ask it for less (a smaller page, a narrower query).`,
    );

  const call: CallMcpTool = async (tool, args, signal, ctx = {}): Promise<ToolOutput> => {
    if (gone) throw exited(false);
    if (closing) throw new ToolError(MCP_SERVER_EXITED, `The MCP server ${o.id} was stopped: the session is closing.`);
    let result: Awaited<ReturnType<Client['callTool']>>;
    const dropped = new AbortController();
    const fail = (bytes: number) => dropped.abort(tooLarge(tool, bytes, false));
    inFlight.add(fail);
    running.add(ctx);
    try {
      // The executor owns the deadline: it aborts `signal` (TOOL_TIMEOUT), which cancels the request on the server too.
      const params = { name: tool, arguments: (args ?? {}) as Record<string, unknown>, ...(ctx.traceparent ? { _meta: { traceparent: ctx.traceparent } } : {}) };
      // `onprogress` makes the SDK send a progress token; reports are for display only (never logged). The server's
      // notices and the polls of a task it made of the call are one count (progress.ts).
      const onprogress = increasingProgress((p) => ctx.progress?.(p));
      const options = { signal: AbortSignal.any([signal, dropped.signal]), timeout: MAX_TIMER_MS };
      result = isTaskTool(listedNow.find((t) => t.name === tool), client.getServerCapabilities())
        ? ((await callAsTask(client as unknown as TaskClient, params, { ...options, progress: onprogress })) as typeof result)
        : await client.callTool(params, { ...options, onprogress });
      const task = extensionTasks ? taskOf(result) : undefined;
      if (task) result = (await followTask(client as unknown as TaskClient, task, { ...options, from: o.id, progress: onprogress, ...(ctx.ask ? { ask: ctx.ask } : {}) })) as typeof result;
    } catch (err) {
      // Past the deadline the request is cancelled, but the server never confirms it stopped: the outcome is unknown (ADR 0052).
      if (signal.aborted && isDeadline(signal.reason)) return pastDeadline(o.id, tool);
      if (signal.aborted) throw signal.reason ?? err;
      if (dropped.signal.aborted) throw dropped.signal.reason;
      if (err instanceof ProtocolError && err.code === RESULT_TOO_LARGE_RPC_CODE && isTooLarge(err.data)) throw tooLarge(tool, err.data.bytes, true);
      if (gone || (err instanceof SdkError && err.code === SdkErrorCode.ConnectionClosed)) {
        gone ??= 'closed';
        throw exited(true);
      }
      return requestFailure(err, o.id, tool);
    } finally {
      inFlight.delete(fail);
      running.delete(ctx);
    }
    return outputOf(result);
  };

  const protocolVersion = client.getNegotiatedProtocolVersion();
  return {
    tools,
    ...(serverInfo ? { serverInfo: { name: serverInfo.name, version: serverInfo.version } } : {}),
    ...(protocolVersion ? { protocolVersion } : {}),
    tasksExtension: extensionTasks,
    call,
    onToolsChanged: (l) => (changed.add(l), () => void changed.delete(l)),
    close,
  };
}

/**
 * Why a start failed, in words for the start's error: a command that cannot run, the session closing, the start's
 * deadline, an exit or a closed connection, an answer off the protocol, else what the error says.
 */
function startFailure(err: unknown, config: McpConfig, state: { sessionClosed: boolean; pastDeadline: boolean; neverSpawned: boolean }): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const where = isStdio(config) ? config.command : redactUrl(config.url);
  const sdk = err instanceof SdkError ? err.code : undefined;
  if (code === 'ENOENT' || code === 'EACCES') return `cannot run ${where} (${code === 'ENOENT' ? 'no such command' : 'permission denied'})`;
  if (state.sessionClosed) return 'the session closed while it was starting';
  if (state.pastDeadline || sdk === SdkErrorCode.RequestTimeout) return `it did not answer initialize and tools/list within ${config.startTimeoutMs} ms`;
  // (The SDK's client closes itself when initialize fails, so `gone` alone does not tell an exit from a refusal.)
  if (sdk === SdkErrorCode.ConnectionClosed || (sdk === SdkErrorCode.EraNegotiationFailed && state.neverSpawned))
    return isStdio(config) ? 'it exited before it had started' : 'it closed the connection before it had started';
  if (sdk === SdkErrorCode.InvalidResult || isSchemaFailure(err)) return 'its answer to initialize or tools/list is not what the protocol says';
  if (err instanceof SdkHttpError) return capText(withStatus(describe(err), httpStatus(err)), MESSAGE_CHARS);
  return capText(describe(err), MESSAGE_CHARS);
}

/**
 * A call's request that failed, not by its signal, a dropped answer or the server going: a timeout's unknown outcome,
 * else the ToolError that says how (unfinished task, refusal, no tool result, unreachable, other).
 */
function requestFailure(err: unknown, server: string, tool: string): ToolOutput {
  if (err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout) return pastDeadline(server, tool);
  if (err instanceof TaskProtocolError) throw new ToolError(MCP_REQUEST_FAILED, capText(`The MCP server ${server} did not finish the ${tool} call: ${err.message}`, MESSAGE_CHARS));
  if (err instanceof ProtocolError) throw new ToolError(MCP_REQUEST_FAILED, capText(`The MCP server ${server} refused the ${tool} call: ${err.message}`, MESSAGE_CHARS));
  if ((err instanceof SdkError && err.code === SdkErrorCode.InvalidResult) || isSchemaFailure(err)) throw new ToolError(MCP_BAD_RESULT, `The MCP server ${server} answered the ${tool} call with something that is not a tool result.`);
  if (err instanceof SdkHttpError || err instanceof TypeError) throw new ToolError(MCP_UNREACHABLE, capText(`The MCP server ${server} could not be reached: ${describe(err)}`, MESSAGE_CHARS));
  throw new ToolError(MCP_REQUEST_FAILED, capText(`The ${tool} call to the MCP server ${server} failed: ${describe(err)}`, MESSAGE_CHARS));
}

/** A tool result as the tool's output; an old server's answer (`toolResult`) is shown as JSON. */
function outputOf(result: unknown): ToolOutput {
  const r = result as McpResultLike & { toolResult?: unknown };
  const text = Array.isArray(r.content) ? resultText(r) : resultText({ structuredContent: r.toolResult });
  return r.isError === true ? { status: 'error', code: MCP_TOOL_ERROR, content: text } : { status: 'ok', content: text };
}

const isDeadline = (reason: unknown) => reason instanceof ToolError && reason.code === ToolResultCode.TOOL_TIMEOUT;

/** An MCP call past its deadline: the server was asked to cancel, and nothing says it did before acting. */
function pastDeadline(server: string, tool: string): ToolOutput {
  return {
    status: 'unknown',
    code: ToolResultCode.TOOL_TIMEOUT,
    content: `The MCP server ${server} did not answer the ${tool} call within its deadline. The call was cancelled, but the server never confirms it stopped, so its effect may or may not have happened: check before relying on it or repeating it.`,
  };
}
