/**
 * The sessions one ACP connection hosts, from open to end: each opened with
 * this connection's hooks (who answers its approvals, the client's files and
 * terminals), its feed subscribed before it starts, opened again when the
 * client sets an option, and ended (its running turn cancelled first) when
 * the client closes it or the connection goes.
 */
import { methods, RequestError, type AgentConnection, type SessionUpdate } from '@agentclientprotocol/sdk';
import type { Answerer } from '../../ports/approval.js';
import type { AcpClientCapabilities } from '../../ports/acp-client.js';
import { ACP_CLIENT } from '../../ports/index.js';
import type { Plugin } from '../../plugins/host.js';
import type { Row } from '../../plugins/rows.js';
import type { BridleSession } from '../../runtime/bridle-session.js';
import { acpClientService } from './client-service.js';
import type { AcpConfig } from './config-options.js';
import { AcpHostedSession } from './hosted.js';
import type { UsageOf } from '../usage.js';
import { permissionAnswerer } from './permission.js';
import { toolKind, toolLocations } from './updates.js';

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
export type OpenAcpSession = (params: AcpOpenParams, hooks: AcpSessionHooks) => BridleSession | Promise<BridleSession>;

/** What a session opened on this connection sends the client before it starts (`host`). */
export type Opening = 'history' | 'state' | 'none';

const noCapabilities: AcpClientCapabilities = { readTextFile: false, writeTextFile: false, terminal: false };

export class AcpSessions {
  /** The sessions open on this connection, by id. */
  readonly open = new Map<string, AcpHostedSession>();
  connection?: AgentConnection;
  /** What the client said it offers in `initialize`. */
  capabilities = noCapabilities;
  clientName = 'client';
  /** The session opened again with a config (a client's set option), for each hosted session. */
  private readonly reopeners = new WeakMap<AcpHostedSession, (config: AcpConfig) => Promise<void>>();
  private closing?: Promise<void>;

  constructor(private readonly o: { open: OpenAcpSession; usage?: UsageOf | undefined; onProblem: (message: string) => void }) {}

  private readonly send = (sessionId: string, update: SessionUpdate): void => {
    this.connection?.client.notify(methods.client.session.update, { sessionId, update }).catch(() => undefined);
  };

  of(id: string): AcpHostedSession {
    const s = this.open.get(id);
    if (!s) throw RequestError.sessionNotFound(id);
    return s;
  }

  /**
   * Opens a session with this connection's hooks, its feed subscribed, then starts it. What goes to the client first: a loaded
   * one's history (`history`), a resumed one's plan and meter (`state`), or nothing (`none`, a new session).
   */
  async host(params: AcpOpenParams, first: Opening = params.sessionId !== undefined ? 'history' : 'none'): Promise<AcpHostedSession> {
    const cx = this.connection;
    if (!cx) throw RequestError.internalError(undefined, 'no connection');
    const hosted = new AcpHostedSession(params.cwd, this.send, this.o.usage);
    const answerer = permissionAnswerer({
      sessionId: () => hosted.id,
      by: `acp:${this.clientName}`,
      ask: (p, signal) => cx.client.request(methods.client.session.requestPermission, p, { cancellationSignal: signal }),
      toolCall: (r) => {
        // A tool's question is shown beside the call that asked it (`t1.s1.c1.q1` is a question of `t1.s1.c1`).
        if (r.form) return { toolCallId: r.callId.replace(/\.q\d+$/, ''), title: r.presented, status: 'in_progress' };
        const args = hosted.feed.calls.get(r.callId)?.args;
        return { toolCallId: r.callId, title: r.presented, kind: toolKind(r.name), status: 'pending', locations: toolLocations(r.name, args, params.cwd), rawInput: args };
      },
    });
    const client = acpClientService(cx.client, { name: this.clientName, capabilities: this.capabilities, sessionId: () => hosted.id });
    const provideClient: Plugin = { name: 'acp-client', provides: [ACP_CLIENT], apply: (ctx) => void ctx.provide(ACP_CLIENT, client) };
    const hooks: AcpSessionHooks = { answerer, plugins: [provideClient] };
    await this.mount(hosted, params, hooks, first);
    // Opened again with a client's option: the client has everything so far.
    this.reopeners.set(hosted, (config) => this.mount(hosted, { ...params, sessionId: hosted.id, config }, hooks, 'none'));
    this.open.set(hosted.id, hosted);
    return hosted;
  }

  private async mount(hosted: AcpHostedSession, params: AcpOpenParams, hooks: AcpSessionHooks, first: Opening): Promise<void> {
    const session = await this.o.open(params, hooks);
    hosted.attach(session);
    // A loaded session's history (a resumed one's plan and meter) goes out before what it does as it starts (a pending approval asked again, queued input).
    if (first === 'history') hosted.replayHistory();
    else if (first === 'state') hosted.sendState();
    else hosted.goLive();
    // The meter is right once the session is open: its `usage_update` is out before the answer.
    await hosted.usageSent();
    session.start();
  }

  /** The session opened again with `config` (a client's set option): closed (no `session/end`: it goes on), then opened under the claim anew; the old config again when that fails. */
  async reconfigure(hosted: AcpHostedSession, config: AcpConfig): Promise<void> {
    const reopen = this.reopeners.get(hosted)!;
    const before = hosted.config;
    await hosted.session.close();
    hosted.detach();
    try {
      await reopen(config);
      hosted.config = config;
    } catch (err) {
      await reopen(before).catch((again: unknown) => {
        this.open.delete(hosted.id);
        this.o.onProblem(`session ${hosted.id}: could not be opened again: ${again instanceof Error ? again.message : String(again)}`);
      });
      throw err;
    }
  }

  /** `session/close`, a delete of an open session, the connection gone: the running turn cancelled first (its closing entries logged), then `session/end`. */
  async end(h: AcpHostedSession): Promise<void> {
    this.open.delete(h.id);
    await h.reopening;
    await h.session.cancel('acp').catch(() => undefined);
    await h.session.end();
  }

  /** Contract: idempotent; never rejects (a session that fails to close is said to `onProblem`). */
  endAll(): Promise<void> {
    return (this.closing ??= (async () => {
      const all = [...this.open.values()];
      // Each running turn ends (cancelled, its closing entries logged) before its session's `session/end`.
      await Promise.all(all.map((h) => this.end(h).catch((err: unknown) => this.o.onProblem(`session ${h.id}: closing failed: ${err instanceof Error ? err.message : String(err)}`))));
    })());
  }
}
