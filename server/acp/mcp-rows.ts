/**
 * The MCP servers an ACP client passes at `session/new` and `session/load`,
 * as rows of the product: `{ id: 'mcp:<name>', use: 'mcp', config }` with
 * `{ command, args, env }` for a stdio server and `{ url }` (plus `headers`
 * when the client sends any) for an HTTP one. They are patched over the
 * composed rows like any layer (`from: 'acp client'`): a row of the same id
 * (one the user configured) is replaced, others are added.
 */
import type { McpServer } from '@agentclientprotocol/sdk';
import type { ComposedRow, Row } from '../../plugins/rows.js';

export class McpServerError extends Error {
  override name = 'McpServerError';
}

const pairs = (list: readonly { name: string; value: string }[]): Record<string, string> => Object.fromEntries(list.map((p) => [p.name, p.value]));

/** Contract: pure; throws `McpServerError` for a server without a name, two servers of one name, or an SSE server (bridle advertises none). */
export function mcpServerRows(servers: readonly McpServer[]): Row[] {
  const seen = new Set<string>();
  return servers.map((s) => {
    if (s.name.trim() === '') throw new McpServerError('an MCP server has an empty name');
    if (seen.has(s.name)) throw new McpServerError(`two MCP servers are named ${JSON.stringify(s.name)}`);
    seen.add(s.name);
    const id = `mcp:${s.name}`;
    if ('type' in s && s.type === 'sse') throw new McpServerError(`MCP server ${JSON.stringify(s.name)} uses SSE, which bridle does not offer (mcpCapabilities.sse is false)`);
    if ('type' in s && s.type === 'http') return { id, use: 'mcp', config: { url: s.url, ...(s.headers.length > 0 ? { headers: pairs(s.headers) } : {}) } };
    const stdio = s as Extract<McpServer, { command: string }>;
    return { id, use: 'mcp', config: { command: stdio.command, args: [...stdio.args], env: pairs(stdio.env) } };
  });
}

/** Contract: pure; `rows` with each of `extra` in place of the row of its id, or after the rest. */
export function patchRows(rows: readonly ComposedRow[], extra: readonly Row[], from: string): ComposedRow[] {
  const byId = new Map(extra.map((r) => [r.id, { ...r, from } as ComposedRow]));
  const out = rows.map((r) => {
    const replaced = byId.get(r.id);
    if (!replaced) return r;
    byId.delete(r.id);
    return replaced;
  });
  return [...out, ...byId.values()];
}
