/**
 * A stdio MCP server written by hand (no SDK) that appends every line it
 * receives to the file named by its first argument: what a client sent, in
 * order, as the server saw it. It speaks the 2025 revisions only and
 * answers `server/discover` as a 2025 server does (method not found).
 * Tools: `echo { text }`, `slow { ms }`. Compiled to
 * `dist/test/helpers/mcp-recording-server.js`.
 */
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

type Msg = { id?: number | string; method?: string; params?: { name?: string; arguments?: { text?: string; ms?: number } } };

const record = process.argv[2];
const send = (m: unknown) => process.stdout.write(`${JSON.stringify(m)}\n`);
const reply = (id: Msg['id'], result: unknown) => send({ jsonrpc: '2.0', id, result });
const obj = (properties: Record<string, unknown>) => ({ type: 'object', properties });

createInterface({ input: process.stdin }).on('line', (line) => {
  if (record) appendFileSync(record, `${line}\n`);
  const m = JSON.parse(line) as Msg;
  if (m.id === undefined) return;
  if (m.method === 'initialize') return reply(m.id, { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'bridle-recording', version: '1.0.0' } });
  if (m.method === 'tools/list') return reply(m.id, { tools: [{ name: 'echo', inputSchema: obj({ text: { type: 'string' } }) }, { name: 'slow', inputSchema: obj({ ms: { type: 'integer' } }) }] });
  if (m.method === 'tools/call' && m.params?.name === 'echo') return reply(m.id, { content: [{ type: 'text', text: `echo: ${m.params.arguments?.text ?? ''}` }] });
  if (m.method === 'tools/call' && m.params?.name === 'slow') return void setTimeout(() => reply(m.id, { content: [{ type: 'text', text: 'slept' }] }), m.params.arguments?.ms ?? 1000);
  send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
});
