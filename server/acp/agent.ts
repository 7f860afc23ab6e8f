/**
 * `createAcpAgent`: bridle as an Agent Client Protocol agent, on the
 * official SDK's agent side (`@agentclientprotocol/sdk`, ACP v1). A host
 * like the WebSocket server: it is handed `open(params, hooks)`, which opens
 * each session from the product the CLI composed, and it carries the
 * sessions over the protocol — `initialize`, `session/new`, `session/load`
 * (the history streamed back from the log), `session/prompt` (one turn; its
 * end as a stop reason), `session/cancel`, `session/update` (the feed of
 * `hosted.ts`), `session/request_permission` (`permission.ts`) — and, when
 * the client offers them, its files and terminals as the `acp-client`
 * service (`client-service.ts`).
 *
 * Bad input never takes it down: the SDK answers malformed JSON, unknown
 * methods and params its schemas refuse with JSON-RPC errors, and what this
 * file refuses is a named `RequestError`. When the connection closes (the
 * editor quit, or stdin ended), every session's running turn is cancelled and
 * its log closed; `closed` resolves after that.
 */
import { agent, methods, PROTOCOL_VERSION, RequestError, type AgentApp, type AgentConnection, type AuthMethod, type McpServer, type SessionUpdate } from '@agentclientprotocol/sdk';
import type { Answerer } from '../../ports/approval.js';
import type { AcpClientCapabilities } from '../../ports/acp-client.js';
import type { Plugin } from '../../plugins/host.js';
import type { Row } from '../../plugins/rows.js';
import { ACP_CLIENT } from '../../ports/index.js';
import type { BridleSession } from '../../runtime/session.js';
import { acpClientService } from './client-service.js';
import { AcpHostedSession, type UsageOf } from './hosted.js';
import { McpServerError, mcpServerRows } from './mcp-rows.js';
import { permissionAnswerer } from './permission.js';
import { promptText, PromptContentError } from './prompt-text.js';
import { promptEnd } from './stop-reason.js';
import { toolKind, toolLocations } from './updates.js';
import { parseTraceparent } from '../../log/trace.js';

export interface AcpOpenParams {
  /** The workspace, absolute (the client's `cwd`). */
  cwd: string;
  /** `session/load`: the bridle session to continue (an id, never a path). */
  sessionId?: string;
  /** The client's MCP servers as rows (`mcp:<name>`), to patch into the product. */
  mcpRows: Row[];
  /** `session/new`'s `_meta.traceparent`, when well formed: the W3C trace context its spans hang under (ADR 0055). */
  traceparent?: string;
}

/** What the agent hands each session it opens: who answers its approvals, and the client's seams. */
export interface AcpSessionHooks {
  answerer: Answerer;
  /** Provides the `acp-client` service (the client's files and terminals) to the rows that use it. */
  plugins: Plugin[];
}

/**
 * Opens one session, not started: the agent subscribes to it, then starts it (ADR 0051). To refuse with words the client may read, throw a
 * `RequestError` (`acpRefusal`); anything else reaches the client as an
 * internal error.
 */
/** A client's trace context rides in `_meta` (the protocol's extension point), under the W3C header's name. */
function metaTraceparent(meta: unknown): { traceparent?: string } {
  const t = meta && typeof meta === 'object' ? (meta as Record<string, unknown>).traceparent : undefined;
  return typeof t === 'string' && parseTraceparent(t) ? { traceparent: t.trim() } : {};
}

export type OpenAcpSession = (params: AcpOpenParams, hooks: AcpSessionHooks) => BridleSession | Promise<BridleSession>;

export interface AcpAgentOptions {
  open: OpenAcpSession;
  /** `agentInfo`. */
  info: { name: string; title?: string; version: string };
  /** What `initialize` says a user must do first; empty when nothing is needed (a local server, a key in the environment). */
  authMethods?: AuthMethod[];
  /** The workspace of a session whose client sends an empty `cwd` (`--cwd`). */
  defaultCwd?: string;
  /** Which MCP transports the product can mount (the stdio one is always offered). */
  mcp?: { http: boolean };
  onProblem?: (message: string) => void;
  /** What a session's tree has cost so far: with it, each step's usage is sent as a `usage_update` (ADR 0048). */
  usage?: UsageOf;
}

export interface AcpAgent {
  readonly app: AgentApp;
  /** The sessions open on this agent, by id. */
  readonly sessions: ReadonlyMap<string, AcpHostedSession>;
  /** Resolves once the connection has closed and every session has ended (turns cancelled, logs flushed and closed). */
  readonly closed: Promise<void>;
  /** Contract: idempotent; cancels running turns and closes every log. */
  close(): Promise<void>;
}

/** A refusal the client may read: JSON-RPC `code`, bridle's `reason` in `data`. */
export function acpRefusal(code: number, reason: string, message: string): RequestError {
  return new RequestError(code, message, { reason });
}

const INVALID_PARAMS = -32602;
/** A session id names a log in `$BRIDLE_HOME/sessions/`, never a path. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const noCapabilities: AcpClientCapabilities = { readTextFile: false, writeTextFile: false, terminal: false };

export function createAcpAgent(o: AcpAgentOptions): AcpAgent {
  const onProblem = o.onProblem ?? (() => undefined);
  const sessions = new Map<string, AcpHostedSession>();
  let connection: AgentConnection | undefined;
  let capabilities = noCapabilities;
  let clientName = 'client';
  let closing: Promise<void> | undefined;
  let markClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));

  const send = (sessionId: string, update: SessionUpdate) => {
    connection?.client.notify(methods.client.session.update, { sessionId, update }).catch(() => undefined);
  };

  function sessionOf(id: string): AcpHostedSession {
    const s = sessions.get(id);
    if (!s) throw RequestError.sessionNotFound(id);
    return s;
  }

  function rowsOf(servers: readonly McpServer[]): Row[] {
    try {
      return mcpServerRows(servers);
    } catch (err) {
      if (err instanceof McpServerError) throw acpRefusal(INVALID_PARAMS, 'BAD_MCP_SERVER', err.message);
      throw err;
    }
  }

  /** Opens a session with this connection's hooks, its feed subscribed (a loaded one's history sent first), then starts it. */
  async function openHosted(params: AcpOpenParams): Promise<AcpHostedSession> {
    const cx = connection;
    if (!cx) throw RequestError.internalError(undefined, 'no connection');
    const hosted = new AcpHostedSession(params.cwd, send, o.usage);
    const by = `acp:${clientName}`;
    const answerer = permissionAnswerer({
      sessionId: () => hosted.id,
      by,
      ask: (p, signal) => cx.client.request(methods.client.session.requestPermission, p, { cancellationSignal: signal }),
      toolCall: (r) => {
        // A tool's question is shown beside the call that asked it (`t1.s1.c1.q1` is a question of `t1.s1.c1`).
        if (r.form) return { toolCallId: r.callId.replace(/\.q\d+$/, ''), title: r.presented, status: 'in_progress' };
        const args = hosted.feed.calls.get(r.callId)?.args;
        return { toolCallId: r.callId, title: r.presented, kind: toolKind(r.name), status: 'pending', locations: toolLocations(r.name, args, params.cwd), rawInput: args };
      },
    });
    const client = acpClientService(cx.client, { name: clientName, capabilities, sessionId: () => hosted.id });
    const provideClient: Plugin = { name: 'acp-client', provides: [ACP_CLIENT], apply: (ctx) => void ctx.provide(ACP_CLIENT, client) };
    const session = await o.open(params, { answerer, plugins: [provideClient] });
    hosted.attach(session);
    // A loaded session's history goes out before what it does as it starts (a pending approval asked again, queued input).
    if (params.sessionId) hosted.replayHistory();
    else hosted.goLive();
    session.start();
    sessions.set(session.id, hosted);
    return hosted;
  }

  const absoluteCwd = (given: string) => {
    const cwd = given === '' && o.defaultCwd ? o.defaultCwd : given;
    if (!cwd.startsWith('/')) throw acpRefusal(INVALID_PARAMS, 'BAD_CWD', `cwd must be an absolute path (got ${JSON.stringify(cwd).slice(0, 200)})`);
    return cwd;
  };

  const app = agent({ name: o.info.name })
    .onConnect((c) => {
      if (connection) throw new Error('an ACP agent serves one connection');
      connection = c;
      void c.closed.then(() => closeAll()).finally(markClosed);
    })
    .onRequest(methods.agent.initialize, ({ params }) => {
      const caps = params.clientCapabilities;
      capabilities = { readTextFile: caps?.fs?.readTextFile === true, writeTextFile: caps?.fs?.writeTextFile === true, terminal: caps?.terminal === true };
      clientName = (params.clientInfo?.name ?? 'client').replace(/[^\w.@/-]/g, '').slice(0, 64) || 'client';
      return {
        protocolVersion: PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: false, audio: false, embeddedContext: true },
          mcpCapabilities: { http: o.mcp?.http ?? false, sse: false },
        },
        authMethods: o.authMethods ?? [],
        agentInfo: { name: o.info.name, title: o.info.title ?? o.info.name, version: o.info.version },
      };
    })
    .onRequest(methods.agent.authenticate, () => {
      // The one method bridle names is an environment variable: nothing a running agent can take over the protocol.
      if ((o.authMethods ?? []).length === 0) return {};
      throw RequestError.authRequired({ reason: 'SET_ENVIRONMENT' }, (o.authMethods ?? []).map((m) => m.description ?? m.name).join('; '));
    })
    .onRequest(methods.agent.session.new, async ({ params }) => {
      const hosted = await openHosted({ cwd: absoluteCwd(params.cwd), mcpRows: rowsOf(params.mcpServers), ...metaTraceparent(params._meta) });
      return { sessionId: hosted.id };
    })
    .onRequest(methods.agent.session.load, async ({ params }) => {
      if (!SESSION_ID.test(params.sessionId)) throw acpRefusal(INVALID_PARAMS, 'BAD_SESSION_ID', `not a bridle session id: ${JSON.stringify(params.sessionId).slice(0, 200)}`);
      const open = sessions.get(params.sessionId);
      if (open) {
        // Loaded twice on one connection: the same session, its history again.
        if (open.prompting) throw RequestError.invalidRequest({ reason: 'PROMPT_RUNNING' }, 'a prompt is running in this session');
        open.replayHistory();
        return {};
      }
      await openHosted({ cwd: absoluteCwd(params.cwd), sessionId: params.sessionId, mcpRows: rowsOf(params.mcpServers) });
      return {};
    })
    .onRequest(methods.agent.session.prompt, async ({ params, signal }) => {
      const hosted = sessionOf(params.sessionId);
      if (hosted.prompting) throw RequestError.invalidRequest({ reason: 'PROMPT_RUNNING' }, 'a prompt is already running in this session; cancel it first');
      let text: string;
      try {
        text = promptText(params.prompt);
      } catch (err) {
        if (err instanceof PromptContentError) throw acpRefusal(INVALID_PARAMS, 'BAD_PROMPT', err.message);
        throw err;
      }
      hosted.prompting = true;
      // `$/cancel_request` for this prompt, or the connection closing, cancels the turn as `session/cancel` does.
      const onAbort = () => void hosted.session.cancel('acp').catch(() => undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        const out = await hosted.session.run(text);
        // The turn's last figures reach the client before its end does.
        await hosted.usageSent();
        const end = promptEnd(out, hosted.session.recorder.entries);
        if ('stopReason' in end) return { stopReason: end.stopReason };
        const data = { reason: 'TURN_FAILED', code: end.failed.code, cause: end.failed.cause };
        if (end.failed.code === 'AUTH') throw RequestError.authRequired(data, end.failed.cause);
        throw new RequestError(-32603, `the turn failed: ${end.failed.code}${end.failed.cause ? `: ${end.failed.cause}` : ''}`, data);
      } catch (err) {
        if (err instanceof RequestError) throw err;
        const code = (err as { code?: unknown }).code;
        throw new RequestError(-32603, `the session failed: ${(err as Error).message}`, { reason: typeof code === 'string' ? code : 'SESSION_FAILED' });
      } finally {
        signal.removeEventListener('abort', onAbort);
        hosted.prompting = false;
      }
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      const hosted = sessions.get(params.sessionId);
      if (hosted?.prompting) void hosted.session.cancel('user').catch(() => undefined);
    });

  function closeAll(): Promise<void> {
    return (closing ??= (async () => {
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.all(
        all.map((h) =>
          h.session.end().catch((err: unknown) => onProblem(`session ${h.id}: closing failed: ${err instanceof Error ? err.message : String(err)}`)),
        ),
      );
    })());
  }

  return {
    app,
    sessions,
    closed,
    close: async () => {
      connection?.close();
      await closeAll();
      if (!connection) markClosed();
    },
  };
}
