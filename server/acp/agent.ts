/**
 * `createAcpAgent`: bridle as an Agent Client Protocol agent, on the
 * official SDK's agent side (`@agentclientprotocol/sdk`, ACP v1). A host
 * like the WebSocket server: it is handed `open(params, hooks)`, which opens
 * each session from the product the CLI composed, and it carries the
 * sessions over the protocol — `initialize`, `session/new`, `session/load`
 * (the history streamed back from the log), `session/resume` (the same, its
 * history not sent), `session/prompt` (one turn; its end as a stop reason),
 * `session/cancel` (and `$/cancel_request` of a prompt), `session/close`,
 * `session/list` and `session/delete` (through the store, ADR 0063),
 * `session/set_config_option` (`config-options.ts`), `session/update` (the
 * feed of `hosted.ts`), `session/request_permission` (`permission.ts`) — and, when
 * the client offers them, its files and terminals as the `acp-client`
 * service (`client-service.ts`).
 *
 * Bad input never takes it down: the SDK answers malformed JSON, unknown
 * methods and params its schemas refuse with JSON-RPC errors, and what this
 * file refuses is a named `RequestError`. When the connection closes (the
 * editor quit, or stdin ended), every session's running turn is cancelled and
 * its log closed; `closed` resolves after that.
 */
import { agent, methods, PROTOCOL_VERSION, RequestError, type AgentApp, type AgentConnection, type AuthMethod, type McpServer, type SessionConfigOption, type SessionUpdate } from '@agentclientprotocol/sdk';
import { SessionLockedError } from '../../log/errors.js';
import type { SessionStore } from '../../ports/store.js';
import { ConfigOptionError, configOptions, settleConfig, type AcpConfig, type AcpConfigChoices } from './config-options.js';
import { BadCursorError, sessionPage } from './session-list.js';
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
  /** What the client set (`session/set_config_option`): the approval mode and the model to open it with. */
  config?: AcpConfig;
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
  /** Where the sessions are: with it, `session/list` lists them and `session/delete` (when the store can) deletes one (ADR 0063). */
  store?: Pick<SessionStore, 'list' | 'delete'>;
  /** What a session may be set to and runs with now: with it, `session/set_config_option` takes the approval mode and the model. */
  config?: (session: BridleSession, set: AcpConfig) => AcpConfigChoices;
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
/** `bridle serve`'s code for a session it cannot open or remove (a claim another process holds). */
const CANNOT_OPEN = -32003;
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

  /** Opens a session with this connection's hooks, its feed subscribed (a loaded one's history sent first when `replay`), then starts it. */
  async function openHosted(params: AcpOpenParams, replay = params.sessionId !== undefined): Promise<AcpHostedSession> {
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
    const hooks: AcpSessionHooks = { answerer, plugins: [provideClient] };
    await mount(hosted, params, hooks, replay);
    reopeners.set(hosted, (config) => mount(hosted, { ...params, sessionId: hosted.id, config }, hooks, false));
    sessions.set(hosted.id, hosted);
    return hosted;
  }

  async function mount(hosted: AcpHostedSession, params: AcpOpenParams, hooks: AcpSessionHooks, replay: boolean): Promise<void> {
    const session = await o.open(params, hooks);
    hosted.attach(session);
    // A loaded session's history goes out before what it does as it starts (a pending approval asked again, queued input).
    if (replay) hosted.replayHistory();
    else hosted.goLive();
    session.start();
  }

  /** The session opened again with `config` (a client's set option): closed (no `session/end`: it goes on), then opened under the claim anew; the old config again when that fails. */
  const reopeners = new WeakMap<AcpHostedSession, (config: AcpConfig) => Promise<void>>();
  async function reconfigure(hosted: AcpHostedSession, config: AcpConfig): Promise<void> {
    const reopen = reopeners.get(hosted)!;
    const before = hosted.config;
    await hosted.session.close();
    hosted.detach();
    try {
      await reopen(config);
      hosted.config = config;
    } catch (err) {
      await reopen(before).catch((again: unknown) => {
        sessions.delete(hosted.id);
        onProblem(`session ${hosted.id}: could not be opened again: ${again instanceof Error ? again.message : String(again)}`);
      });
      throw err;
    }
  }

  const optionsOf = (hosted: AcpHostedSession): { configOptions?: SessionConfigOption[] } => (o.config ? { configOptions: configOptions(o.config(hosted.session, hosted.config)) } : {});

  /** `session/close`, a delete of an open session, the connection gone: the running turn cancelled first (its closing entries logged), then `session/end`. */
  async function endHosted(h: AcpHostedSession): Promise<void> {
    sessions.delete(h.id);
    await h.reopening;
    await h.session.cancel('acp').catch(() => undefined);
    await h.session.end();
  }

  const checkedId = (id: string): string => {
    if (!SESSION_ID.test(id)) throw acpRefusal(INVALID_PARAMS, 'BAD_SESSION_ID', `not a bridle session id: ${JSON.stringify(id).slice(0, 200)}`);
    return id;
  };

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
          sessionCapabilities: { resume: {}, close: {}, ...(o.store ? { list: {} } : {}), ...(o.store?.delete ? { delete: {} } : {}) },
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
      return { sessionId: hosted.id, ...optionsOf(hosted) };
    })
    .onRequest(methods.agent.session.load, async ({ params }) => {
      const open = sessions.get(checkedId(params.sessionId));
      if (open) {
        // Loaded twice on one connection: the same session, its history again.
        if (open.prompting) throw RequestError.invalidRequest({ reason: 'PROMPT_RUNNING' }, 'a prompt is running in this session');
        open.replayHistory();
        return optionsOf(open);
      }
      return optionsOf(await openHosted({ cwd: absoluteCwd(params.cwd), sessionId: params.sessionId, mcpRows: rowsOf(params.mcpServers) }));
    })
    // As `session/load`, but the client keeps its own history: nothing of the log is sent (a cwd other than the log's is refused alike).
    .onRequest(methods.agent.session.resume, async ({ params }) => {
      const open = sessions.get(checkedId(params.sessionId));
      if (open) return optionsOf(open);
      return optionsOf(await openHosted({ cwd: absoluteCwd(params.cwd), sessionId: params.sessionId, mcpRows: rowsOf(params.mcpServers ?? []) }, false));
    })
    .onRequest(methods.agent.session.close, async ({ params }) => {
      await endHosted(sessionOf(params.sessionId));
      return {};
    })
    .onRequest(methods.agent.session.list, async ({ params }) => {
      if (!o.store) throw RequestError.methodNotFound('session/list');
      try {
        return sessionPage((await o.store.list()).sessions, params);
      } catch (err) {
        if (err instanceof BadCursorError) throw acpRefusal(INVALID_PARAMS, 'BAD_CURSOR', err.message);
        throw err;
      }
    })
    .onRequest(methods.agent.session.delete, async ({ params }) => {
      const store = o.store;
      if (!store?.delete) throw RequestError.methodNotFound('session/delete');
      const id = checkedId(params.sessionId);
      const open = sessions.get(id);
      if (open) await endHosted(open);
      let deleted: boolean;
      try {
        deleted = await store.delete(id);
      } catch (err) {
        // Another process writes it: its log is never removed (ADR 0063).
        if (err instanceof SessionLockedError) throw acpRefusal(CANNOT_OPEN, 'SESSION_LOCKED', `not deleted: ${err.message}`);
        throw err;
      }
      if (!deleted) throw RequestError.sessionNotFound(id);
      return {};
    })
    .onRequest(methods.agent.session.setConfigOption, async ({ params }) => {
      const hosted = sessionOf(params.sessionId);
      if (!o.config) throw RequestError.methodNotFound('session/set_config_option');
      if (hosted.prompting || hosted.reopening) throw RequestError.invalidRequest({ reason: 'PROMPT_RUNNING' }, 'a prompt is running in this session; options change between prompts');
      let change: AcpConfig | undefined;
      try {
        change = settleConfig(o.config(hosted.session, hosted.config), params.configId, (params as { value: unknown }).value);
      } catch (err) {
        if (err instanceof ConfigOptionError) throw acpRefusal(INVALID_PARAMS, err.reason, err.message);
        throw err;
      }
      if (change) {
        const done = reconfigure(hosted, { ...hosted.config, ...change });
        hosted.reopening = done.catch(() => undefined);
        try {
          await done;
        } catch (err) {
          throw err instanceof RequestError ? err : acpRefusal(INVALID_PARAMS, 'CANNOT_OPEN', `the option was not set: ${(err as Error).message}`);
        } finally {
          hosted.reopening = undefined;
        }
      }
      return { configOptions: configOptions(o.config(hosted.session, hosted.config)) };
    })
    .onRequest(methods.agent.session.prompt, async ({ params, signal }) => {
      const hosted = sessionOf(params.sessionId);
      await hosted.reopening;
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
      // Each running turn ends (cancelled, its closing entries logged) before its session's `session/end`.
      await Promise.all(all.map((h) => endHosted(h).catch((err: unknown) => onProblem(`session ${h.id}: closing failed: ${err instanceof Error ? err.message : String(err)}`))));
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
