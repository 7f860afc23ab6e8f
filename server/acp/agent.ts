/**
 * `createAcpAgent`: bridle as an Agent Client Protocol agent, on the
 * official SDK's agent side (`@agentclientprotocol/sdk`, ACP v1). A host
 * like the WebSocket server: it is handed `open(params, hooks)`, which opens
 * each session from the product the CLI composed, and it carries the
 * sessions over the protocol — `initialize`, `session/new`, `session/load`
 * (the history streamed back from the log), `session/resume` (the same, its
 * history not sent, only the plan now and the meter), `session/prompt` (one turn; its end as a stop reason),
 * `session/cancel` (and `$/cancel_request` of a prompt), `session/close`,
 * `session/list` and `session/delete` (through the store, ADR 0063),
 * `session/set_config_option` (`set-config.ts`), `session/update` (the
 * feed of `hosted.ts`), `session/request_permission` (`permission.ts`) — and, when
 * the client offers them, its files and terminals as the `acp-client`
 * service (`client-service.ts`). The session methods are `session-methods.ts`
 * (a turn `prompt-turn.ts`), the sessions from open to end `sessions.ts`.
 *
 * Bad input never takes it down: the SDK answers malformed JSON, unknown
 * methods and params its schemas refuse with JSON-RPC errors, and what the
 * agent refuses is a named `RequestError` (`refusal.ts`). When the connection closes (the
 * editor quit, or stdin ended), every session's running turn is cancelled and
 * its log closed; `closed` resolves after that.
 */
import { agent, methods, PROTOCOL_VERSION, RequestError, type AgentApp, type AuthMethod } from '@agentclientprotocol/sdk';
import type { SessionStore } from '../../ports/store.js';
import type { AcpHostedSession } from './hosted.js';
import type { UsageOf } from '../usage.js';
import { sessionMethods } from './session-methods.js';
import { AcpSessions, type OpenAcpSession } from './sessions.js';
import type { AcpConfigOf } from './set-config.js';

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
  config?: AcpConfigOf;
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

export function createAcpAgent(o: AcpAgentOptions): AcpAgent {
  const sessions = new AcpSessions({ open: o.open, usage: o.usage, onProblem: o.onProblem ?? (() => undefined) });
  let markClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));

  const app = agent({ name: o.info.name })
    .onConnect((c) => {
      if (sessions.connection) throw new Error('an ACP agent serves one connection');
      sessions.connection = c;
      void c.closed.then(() => sessions.endAll()).finally(markClosed);
    })
    .onRequest(methods.agent.initialize, ({ params }) => {
      const caps = params.clientCapabilities;
      sessions.capabilities = { readTextFile: caps?.fs?.readTextFile === true, writeTextFile: caps?.fs?.writeTextFile === true, terminal: caps?.terminal === true };
      sessions.clientName = (params.clientInfo?.name ?? 'client').replace(/[^\w.@/-]/g, '').slice(0, 64) || 'client';
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
    });
  sessionMethods(app, sessions, { defaultCwd: o.defaultCwd, store: o.store, config: o.config });

  return {
    app,
    sessions: sessions.open,
    closed,
    close: async () => {
      sessions.connection?.close();
      await sessions.endAll();
      if (!sessions.connection) markClosed();
    },
  };
}
