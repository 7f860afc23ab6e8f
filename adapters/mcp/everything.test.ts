/**
 * Against a server nobody on this project wrote: the MCP project's own
 * reference server, `@modelcontextprotocol/server-everything` (a
 * development dependency), started over stdio as a client would start it.
 */
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeTool } from '../../actors/execute-tool.js';
import { validateCall } from '../../tools/validate-call.js';
import type { ToolDefinition } from '../../ports/tools.js';
import { McpConfig } from './config.js';
import { connectMcp, type McpConnection } from './connection.js';
import { bridleTools } from './tools.js';
import { tempDir } from '../../test/helpers/temp.js';

const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');

let conn: McpConnection;
let tools: ToolDefinition[];
let problems: string[];
let ws: string;
beforeAll(async () => {
  ws = tempDir('bridle-everything-');
  process.env.OPENAI_API_KEY_FOR_THIS_TEST = 'sk-must-not-reach-the-server';
  try {
    conn = await connectMcp(McpConfig.parse({ command: process.execPath, args: [EVERYTHING, 'stdio'] }), { id: 'mcp:everything', cwd: ws, signal: new AbortController().signal });
  } finally {
    delete process.env.OPENAI_API_KEY_FOR_THIS_TEST;
  }
  ({ tools, problems } = bridleTools('mcp:everything', conn.tools, conn.call, 30_000, { trusted: true }));
});
afterAll(async () => {
  await conn?.close();
  rmSync(ws, { recursive: true, force: true });
});

const run = async (name: string, args: unknown) => {
  const v = validateCall(tools, `mcp__everything__${name}`, JSON.stringify(args));
  if (!v.ok) throw new Error(v.message);
  return v.tool.execute(v.args, { fs: undefined as never, subprocess: undefined as never, signal: new AbortController().signal });
};

describe('the reference server-everything', () => {
  it('every tool it lists becomes a bridle tool: each schema converts, each name fits the wire, classes follow its annotations (its row trusted)', () => {
    expect(conn.serverInfo?.name).toBe('mcp-servers/everything');
    expect(problems).toEqual([]);
    expect(tools.length).toBe(conn.tools.length);
    expect(tools.length).toBeGreaterThan(8);
    const echo = tools.find((t) => t.name === 'mcp__everything__echo')!;
    expect([echo.readOnly, echo.idempotent]).toEqual([true, true]);
    const toggle = tools.find((t) => t.name === 'mcp__everything__toggle-simulated-logging')!;
    expect([toggle.readOnly, toggle.idempotent]).toEqual([false, false]);
  });

  it('answers calls: text, an image described, an embedded resource, structured content; bad arguments never reach it (I4)', async () => {
    expect(await run('echo', { message: 'hello' })).toEqual({ status: 'ok', content: 'Echo: hello' });
    expect(await run('get-sum', { a: 2, b: 40 })).toMatchObject({ status: 'ok', content: expect.stringContaining('42') });
    const image = await run('get-tiny-image', {});
    expect(image.content).toMatch(/\[image: image\/png, [\d.]+ (bytes|KiB); not shown: this session passes text only\]/);
    expect(image.content).not.toMatch(/iVBORw0KGgo/);
    expect((await run('get-resource-reference', { resourceType: 'Text', resourceId: 1 })).content).toMatch(/\[resource demo:\/\/resource\/dynamic\/text\/1 \(text\/plain\)\]\nResource 1:/);
    expect((await run('get-structured-content', { location: 'Chicago' })).content).toMatch(/temperature/);
    expect(validateCall(tools, 'mcp__everything__get-sum', '{"a":"two","b":1}')).toMatchObject({ ok: false, code: 'INVALID_ARGUMENTS' });
  });

  it('sees none of bridle\'s environment but the harmless variables', async () => {
    const env = JSON.parse((await run('get-env', {})).content) as Record<string, string>;
    expect(Object.keys(env).sort()).toEqual(expect.arrayContaining(['PATH']));
    expect(env.OPENAI_API_KEY_FOR_THIS_TEST).toBeUndefined();
    expect(Object.keys(env).every((k) => ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'].includes(k))).toBe(true);
  });

  it('offers no tool that needs a capability bridle does not declare (sampling), one that asks (elicitation, ADR 0065), and a long call past its deadline is TOOL_TIMEOUT', async () => {
    expect(tools.map((t) => t.name)).not.toContain('mcp__everything__trigger-sampling-request');
    expect(tools.map((t) => t.name)).toContain('mcp__everything__trigger-elicitation-request');
    const { tools: quick } = bridleTools('mcp:everything', conn.tools, conn.call, 300);
    const long = quick.find((t) => t.name === 'mcp__everything__trigger-long-running-operation')!;
    const out = await executeTool(long, { duration: 10, steps: 2 }, { fs: undefined as never, subprocess: undefined as never, signal: new AbortController().signal });
    expect(out).toMatchObject({ status: 'unknown', code: 'TOOL_TIMEOUT' });
    expect(await run('echo', { message: 'still here' })).toEqual({ status: 'ok', content: 'Echo: still here' });
  });
});
