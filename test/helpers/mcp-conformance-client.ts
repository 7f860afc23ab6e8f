/**
 * bridle's MCP client as the conformance suite drives it
 * (`@modelcontextprotocol/conformance client --command "node <this> "`, the
 * server's URL appended): `connectMcp` on the URL, exactly as an
 * `mcp:<name>` row with a `url` starts, then one call of every tool listed,
 * with arguments made from its schema, then close. What bridle does with a
 * scenario is what a session would do; nothing here is scenario-specific.
 * A server's input request is a session's question (ADR 0065), answered by a
 * person who says yes to every question without filling anything in: the
 * form's defaults are the values.
 * Compiled to `dist/test/helpers/mcp-conformance-client.js`.
 */
import { McpConfig } from '../../adapters/mcp/config.js';
import { connectMcp } from '../../adapters/mcp/connection.js';
import { toolQuestions } from '../../actors/tool-question.js';
import type { Recorder } from '../../log/recorder.js';

/** The log a question is written to: kept in memory, never read. */
const entries: unknown[] = [];
const recorder = { entries, append: (d: unknown) => void entries.push(d), flush: async () => undefined } as unknown as Recorder;
const askSession = toolQuestions(recorder, { policy: 'ask', answerer: async () => ({ outcome: 'allowed-once', by: 'conformance' }) });

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; required?: string[]; enum?: unknown[]; default?: unknown };

/** A value a schema accepts, for the properties it requires: the default, the first enum member, or one of its type. */
function sample(s: Schema | undefined): unknown {
  if (!s) return {};
  if (s.default !== undefined) return s.default;
  if (s.enum?.length) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'number' || type === 'integer') return 1;
  if (type === 'string') return 'x';
  if (type === 'boolean') return true;
  if (type === 'array') return [];
  const out: Record<string, unknown> = {};
  for (const k of s.required ?? []) out[k] = sample(s.properties?.[k]);
  return out;
}

async function main(url: string): Promise<number> {
  const signal = new AbortController().signal;
  const conn = await connectMcp(McpConfig.parse({ url }), { id: 'mcp:conformance', cwd: process.cwd(), signal });
  process.stdout.write(`connected: ${conn.protocolVersion ?? '?'}, ${conn.tools.length} tools\n`);
  let k = 0;
  for (const t of conn.tools) {
    const call = { turn: 't1', step: 't1.s1', callId: `t1.s1.c${++k}` };
    const ask = (q: Parameters<typeof askSession>[1], own?: AbortSignal) => askSession(call, q, own ?? signal);
    const out = await conn.call(t.name, sample(t.inputSchema as Schema), signal, { ask }).catch((err: unknown) => ({ status: 'error', content: String(err) }));
    process.stdout.write(`${t.name}: ${out.status} ${out.content.slice(0, 200)}\n`);
  }
  await conn.close();
  return 0;
}

const url = process.argv.at(-1);
if (!url?.startsWith('http')) {
  process.stderr.write('usage: mcp-conformance-client <server url>\n');
  process.exit(2);
}
main(url).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
