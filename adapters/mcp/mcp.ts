/**
 * The `mcp` row: `{ id: 'mcp:<name>', use: 'mcp', config: { command, args?, env? } | { url, headers? } }`
 * mounts one MCP server for the session. Its start is the plugin's async
 * `apply`: the session holds its first turn until every such start has
 * settled, so the first request already lists the server's tools (or, for a
 * server that did not start, does not). The outcome is logged once, as an
 * `mcp/server` entry: the tools it registered with their class, what was
 * left out, or why it failed — a clear warning, never a crashed session.
 * The server stops when the session closes (`session/close`) or the row is
 * unmounted.
 */
import type { DraftOf } from '../../log/entries.js';
import { HOOKS, SESSION, TOOLS } from '../../ports/index.js';
import type { Plugin } from '../../plugins/host.js';
import { McpConfig } from './config.js';
import { McpStartError, MCP_START_FAILED } from './errors.js';
import { bridleTools } from './tools.js';
import type { McpConnection } from './connection.js';

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
    try {
      starting = import('./connection.js').then(({ connectMcp }) => connectMcp(config, { id: ctx.id, cwd: session.cwd, signal: stop.signal }));
      conn = await starting;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      report({ outcome: 'failed', tools: [], problems: [], code: err instanceof McpStartError ? err.code : MCP_START_FAILED, message });
      // The host marks the row failed and undoes what it did; the session goes on without its tools.
      throw err instanceof McpStartError ? err : new McpStartError(message);
    }
    if (!live) return void (await conn.close());
    const { tools, problems } = bridleTools(ctx.id, conn.tools, conn.call, config.timeoutMs);
    for (const t of tools) ctx.tools.register(t);
    report({ outcome: 'started', tools: tools.map((t) => ({ name: t.name, readOnly: t.readOnly, idempotent: t.idempotent })), problems });
  },
};
