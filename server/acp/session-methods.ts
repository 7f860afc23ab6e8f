/**
 * The session methods of the ACP agent: `session/new`, `session/load` (the
 * history streamed back from the log), `session/resume` (the same, its
 * history not sent, only the plan now and the meter), `session/close`, `session/list` and `session/delete`
 * (through the store, ADR 0063), `session/set_config_option`,
 * `session/prompt` and `session/cancel`.
 */
import { methods, RequestError, type AgentApp } from '@agentclientprotocol/sdk';
import { SessionLockedError } from '../../log/errors.js';
import type { SessionStore } from '../../ports/store.js';
import { promptTurn } from './prompt-turn.js';
import { absoluteCwd, acpRefusal, CANNOT_OPEN, checkedId, INVALID_PARAMS, metaTraceparent, rowsOf } from './refusal.js';
import { BadCursorError, sessionPage } from './session-list.js';
import type { AcpSessions } from './sessions.js';
import { sessionOptions, setConfigOption, type AcpConfigOf } from './set-config.js';

export interface SessionMethodsOptions {
  defaultCwd?: string | undefined;
  store?: Pick<SessionStore, 'list' | 'delete'> | undefined;
  config?: AcpConfigOf | undefined;
}

/** Registers the session methods on `app`, over `sessions`. */
export function sessionMethods(app: AgentApp, sessions: AcpSessions, o: SessionMethodsOptions): AgentApp {
  const cwdOf = (given: string) => absoluteCwd(given, o.defaultCwd);
  return app
    .onRequest(methods.agent.session.new, async ({ params }) => {
      const hosted = await sessions.host({ cwd: cwdOf(params.cwd), mcpRows: rowsOf(params.mcpServers), ...metaTraceparent(params._meta) });
      return { sessionId: hosted.id, ...sessionOptions(o.config, hosted) };
    })
    .onRequest(methods.agent.session.load, async ({ params }) => {
      const open = sessions.open.get(checkedId(params.sessionId));
      if (open) {
        // Loaded twice on one connection: the same session, its history again.
        if (open.prompting) throw RequestError.invalidRequest({ reason: 'PROMPT_RUNNING' }, 'a prompt is running in this session');
        open.replayHistory();
        await open.usageSent();
        return sessionOptions(o.config, open);
      }
      return sessionOptions(o.config, await sessions.host({ cwd: cwdOf(params.cwd), sessionId: params.sessionId, mcpRows: rowsOf(params.mcpServers) }));
    })
    // As `session/load`, but the client keeps its own history: none of the log's entries is sent, only the plan now and the meter (a cwd other than the log's is refused alike).
    .onRequest(methods.agent.session.resume, async ({ params }) => {
      const open = sessions.open.get(checkedId(params.sessionId));
      if (open) return sessionOptions(o.config, open);
      return sessionOptions(o.config, await sessions.host({ cwd: cwdOf(params.cwd), sessionId: params.sessionId, mcpRows: rowsOf(params.mcpServers ?? []) }, 'state'));
    })
    .onRequest(methods.agent.session.close, async ({ params }) => {
      await sessions.end(sessions.of(params.sessionId));
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
      const open = sessions.open.get(id);
      if (open) await sessions.end(open);
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
    .onRequest(methods.agent.session.setConfigOption, ({ params }) => setConfigOption(sessions, o.config, params))
    .onRequest(methods.agent.session.prompt, async ({ params, signal }) => promptTurn(sessions.of(params.sessionId), params.prompt, signal))
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      const hosted = sessions.open.get(params.sessionId);
      if (hosted?.prompting) void hosted.session.cancel('user').catch(() => undefined);
    });
}
