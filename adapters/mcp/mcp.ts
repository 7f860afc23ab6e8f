/**
 * The `mcp` row: `{ id: 'mcp:<name>', use: 'mcp', config: { command, args?, env? } | { url, headers? } }`
 * mounts one MCP server for the session. Its start is the plugin's async
 * `apply`: the session holds its first turn until every such start has
 * settled, so the first request already lists the server's tools (or, for a
 * server that did not start, does not). The outcome is logged once, as an
 * `mcp/server` entry: the tools it registered with their class, what was
 * left out, or why it failed — a clear warning, never a crashed session.
 * The server stops when the session closes (`session/close`) or the row is
 * unmounted. A server that announces a changed tool list has it offered
 * from the next step on, never mid-step, logged as an `mcp/server` entry
 * with outcome `relisted` (ADR 0054).
 *
 * Two rows whose names give the same tool prefix (`mcp:a.b` and `mcp:a_b`
 * are both `mcp__a_b__*`), or one prefix inside another's (`mcp:a` and
 * `mcp:a__b`), cannot both be offered: the later row is refused by name
 * (`MCP_NAME_TAKEN`, logged like a failed start) before its server starts.
 */
import type { DraftOf } from '../../log/entries.js';
import { HOOKS, SESSION, TOOLS } from '../../ports/index.js';
import type { Plugin, PluginContext } from '../../plugins/host.js';
import { McpConfig } from './config.js';
import { McpStartError, MCP_NAME_TAKEN, MCP_START_FAILED } from './errors.js';
import type { Disposer } from '../../ports/hooks.js';
import { betweenSteps } from './between-steps.js';
import { childTraceparent } from '../../log/trace.js';
import { bridleTools, serverName, type McpToolInfo } from './tools.js';
import type { McpConnection } from './connection.js';

/** The tool prefixes claimed in one session, by its tools registry: prefix → row id. */
const claims = new WeakMap<object, Map<string, string>>();

const prefixOf = (rowId: string) => `mcp__${serverName(rowId)}__`;

/** Contract: pure; the row whose prefix equals or overlaps `rowId`'s, if one has claimed it. */
function clashOf(taken: ReadonlyMap<string, string>, rowId: string): string | undefined {
  const mine = prefixOf(rowId);
  for (const [prefix, owner] of taken) if (owner !== rowId && (prefix.startsWith(mine) || mine.startsWith(prefix))) return owner;
  return undefined;
}

/**
 * Claims the row's tool prefix in its session (released when the row goes), unless a row before it holds the same
 * or an overlapping one: then nothing is claimed, and the refusal's message is returned.
 */
function claimPrefix(ctx: PluginContext): string | undefined {
  const taken = claims.get(ctx.get(TOOLS)) ?? new Map<string, string>();
  claims.set(ctx.get(TOOLS), taken);
  const clash = clashOf(taken, ctx.id);
  if (clash !== undefined)
    return `the MCP server ${ctx.id} is refused: its tools would be named ${prefixOf(ctx.id)}*, which ${prefixOf(clash) === prefixOf(ctx.id) ? 'are' : 'overlap'} the tool names of ${clash} (${prefixOf(clash)}*); rename one of the two rows`;
  taken.set(prefixOf(ctx.id), ctx.id);
  ctx.effect(() => () => void (taken.get(prefixOf(ctx.id)) === ctx.id && taken.delete(prefixOf(ctx.id))));
  return undefined;
}

/**
 * The offer of a started server's tools: each call registers the tools listed in place of those offered before,
 * and says what it offers now and what it left out.
 */
function toolOffer(ctx: PluginContext, config: McpConfig, connection: McpConnection) {
  const session = ctx.get(SESSION);
  // A session given a trace context passes each call's span on, as a subagent is given its call's (ADR 0055).
  const traceparentOf = (callId: string) => (session.traceparent ? childTraceparent(session.entries(), callId) : undefined);
  const held: Disposer[] = [];
  return (listed: readonly McpToolInfo[]) => {
    for (const undo of held.splice(0)) undo();
    const { tools: built, problems } = bridleTools(ctx.id, listed, connection.call, config.timeoutMs, { trusted: config.trusted, traceparentOf });
    const tools = built.filter((t) => {
      // A name another row (a plugin, a tool row) registered first: this one is left out, saying so, rather than failing the row in silence.
      try {
        held.push(ctx.tools.register(t));
        return true;
      } catch (err) {
        problems.push(`${JSON.stringify(t.name)} left out: ${err instanceof Error ? err.message : String(err)}`);
        return false;
      }
    });
    return { tools: tools.map((t) => ({ name: t.name, readOnly: t.readOnly, idempotent: t.idempotent })), problems };
  };
}

export const mcpPlugin: Plugin<McpConfig> = {
  name: 'mcp',
  inject: [TOOLS, SESSION, HOOKS],
  config: McpConfig,
  async apply(ctx, config) {
    const session = ctx.get(SESSION);
    const stop = new AbortController();
    let live = true;
    let conn: McpConnection | undefined;
    let starting: Promise<McpConnection> | undefined;
    // A start still under way is aborted and waited for: its process is gone when the session's close resolves.
    const shutdown = async () => {
      live = false;
      stop.abort();
      await starting?.catch(() => undefined);
      await conn?.close();
    };
    // Whichever comes first stops the server: the session closing (awaited), or the row going away.
    ctx.effect(() => () => void shutdown());
    ctx.hooks.on('session/close', () => shutdown());
    const report = (draft: Omit<DraftOf<'mcp/server'>, 'kind' | 'server' | 'ignorable'>) => {
      // A log that is already closed (the session ended while the server started) hears nothing more.
      if (!live) return;
      try {
        session.record({ kind: 'mcp/server', server: ctx.id, ignorable: true, ...draft });
      } catch {}
    };
    // Claimed before the first await: rows apply in row order, so the later row is the one refused.
    const clash = claimPrefix(ctx);
    if (clash !== undefined) {
      // Reported once the session that is mounting its rows exists (its log is opened after the rows mount).
      await new Promise((resolve) => setImmediate(resolve));
      report({ outcome: 'failed', tools: [], problems: [], code: MCP_NAME_TAKEN, message: clash });
      throw new McpStartError(clash, MCP_NAME_TAKEN);
    }
    try {
      starting = import('./connection.js').then(({ connectMcp }) => connectMcp(config, { id: ctx.id, cwd: session.cwd, signal: stop.signal, ...(session.traceparent ? { traceparent: session.traceparent } : {}) }));
      conn = await starting;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      report({ outcome: 'failed', tools: [], problems: [], code: err instanceof McpStartError ? err.code : MCP_START_FAILED, message });
      // The host marks the row failed and undoes what it did; the session goes on without its tools.
      throw err instanceof McpStartError ? err : new McpStartError(message);
    }
    if (!live) return void (await conn.close());
    const connection = conn;
    const offer = toolOffer(ctx, config, connection);
    report({ outcome: 'started', ...offer(connection.tools) });
    // A changed list (`notifications/tools/list_changed`) is offered from the next step on, and logged (ADR 0054).
    let latest: readonly McpToolInfo[] = connection.tools;
    const gate = betweenSteps(() => {
      const now = offer(latest);
      // Out of the entry listener that let it through: the log's listeners see entries in order.
      queueMicrotask(() => report({ outcome: 'relisted', ...now }));
    });
    ctx.hooks.on('session/entry', (e) => gate.entry(e));
    ctx.effect(() =>
      connection.onToolsChanged((listed) => {
        if (!live) return;
        latest = listed;
        gate.changed();
      }),
    );
  },
};
