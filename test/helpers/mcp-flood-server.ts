/**
 * A stdio MCP server written by hand (no SDK), for the one thing the SDK's
 * server cannot be told to do: answer with a line of any size, its `id`
 * first (as Python's SDK writes it), last (as the TypeScript SDK does), or
 * missing. Tools: `flood { mb, order: 'first' | 'last' | 'none' }`, `small`,
 * `pid`. Compiled to `dist/test/helpers/mcp-flood-server.js`.
 */
import { createInterface } from 'node:readline';

type Msg = { id?: number | string; method?: string; params?: { name?: string; arguments?: { mb?: number; order?: string } } };

const send = (line: string) => process.stdout.write(`${line}\n`);
const reply = (id: Msg['id'], result: unknown) => send(JSON.stringify({ jsonrpc: '2.0', id, result }));
const text = (t: string) => ({ content: [{ type: 'text', text: t }] });
const obj = (properties: Record<string, unknown>) => ({ type: 'object', properties });

function flood(id: Msg['id'], mb: number, order: string): void {
  const filler = 'z'.repeat(1024 * 1024);
  const body = `{"content":[{"type":"text","text":"${filler.repeat(mb)}"}]}`;
  if (order === 'first') send(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${body}}`);
  else if (order === 'last') send(`{"result":${body},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`);
  // A line that names no request: a huge notification, say. The call it came instead of is never answered.
  else send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"${filler.repeat(mb)}"}}`);
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line) as Msg;
  if (m.method === 'initialize') return reply(m.id, { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'bridle-flood', version: '1.0.0' } });
  if (m.method === 'tools/list')
    return reply(m.id, { tools: [{ name: 'flood', inputSchema: obj({ mb: { type: 'integer' }, order: { type: 'string' } }) }, { name: 'small', inputSchema: obj({}) }, { name: 'pid', inputSchema: obj({}) }] });
  if (m.method !== 'tools/call' || m.id === undefined) return;
  const name = m.params?.name;
  if (name === 'flood') return flood(m.id, m.params?.arguments?.mb ?? 50, m.params?.arguments?.order ?? 'last');
  if (name === 'small') return reply(m.id, text('small and fine'));
  if (name === 'pid') return reply(m.id, text(String(process.pid)));
});
