/**
 * The connection against real MCP servers built with the SDK's server side:
 * the fixture as a process over stdio (compiled: `npm run build` first) and
 * in this process over streamable HTTP on loopback. A server that crashes
 * mid-call, one that never starts, one that is too slow to start.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ToolError } from '../../ports/tool-error.js';
import { executeTool } from '../../actors/execute-tool.js';
import { startHttpFixture, type HttpFixture } from '../../test/helpers/mcp-fixture-server.js';
import { FIXTURE, requireFixture } from '../../test/helpers/mcp-fixture.js';
import { McpConfig } from './config.js';
import { connectMcp, type McpConnection } from './connection.js';
import { MCP_BAD_RESULT, MCP_REQUEST_FAILED, MCP_RESULT_TOO_LARGE, MCP_SERVER_EXITED, MCP_TOOL_ERROR, MCP_UNREACHABLE, McpStartError } from './errors.js';
import { bridleTools } from './tools.js';
import { tempDir } from '../../test/helpers/temp.js';

const FLOOD = FIXTURE.replace(/mcp-fixture-server\.js$/, 'mcp-flood-server.js');


const opened: McpConnection[] = [];
const dirs: string[] = [];
let http: HttpFixture | undefined;
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
  await http?.close();
  http = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
beforeAll(() => void requireFixture());

const workspace = () => {
  const d = tempDir('bridle-mcp-');
  dirs.push(d);
  return d;
};

async function open(config: Record<string, unknown>, cwd = workspace()): Promise<McpConnection> {
  const c = await connectMcp(McpConfig.parse(config), { id: 'mcp:fx', cwd, signal: new AbortController().signal });
  opened.push(c);
  return c;
}
const stdio = (...args: string[]) => ({ command: process.execPath, args: [FIXTURE, ...args] });
const call = (c: McpConnection, tool: string, args: unknown = {}, signal = new AbortController().signal) => c.call(tool, args, signal);
const failure = async (p: Promise<unknown>) => {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ToolError);
  return err as ToolError;
};

/** Processes whose command line holds `marker`, read from /proc: did the one we started go away? */
const running = (marker: string) =>
  readdirSync('/proc').filter((p) => {
    try {
      return /^\d+$/.test(p) && readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(marker);
    } catch {
      return false;
    }
  });

describe('an MCP server over stdio', () => {
  it('starts, lists its tools, and answers: text, its own failure, non-text parts, junk on stdout survived', async () => {
    const c = await open(stdio());
    expect(c.serverInfo).toEqual({ name: 'bridle-fixture', version: '1.0.0' });
    expect(c.tools.map((t) => t.name)).toContain('echo');
    expect(await call(c, 'echo', { text: 'hi' })).toEqual({ status: 'ok', content: 'echo: hi' });
    expect(await call(c, 'fail')).toEqual({ status: 'error', code: MCP_TOOL_ERROR, content: 'the fixture failed as asked' });
    expect((await call(c, 'picture')).content).toBe('here is a picture\n[image: image/png, 70 bytes; not shown: this session passes text only]\n[resource fixture://notes/1 (text/plain)]\nnote one\n[resource link: note two <fixture://notes/2> (text/plain)]');
    expect(await call(c, 'noise')).toEqual({ status: 'ok', content: 'still here' });
    expect(await call(c, 'echo', { text: 'after the noise' })).toEqual({ status: 'ok', content: 'echo: after the noise' });
  });

  it('a hostile answer is a named error and the server stays usable: not a tool result, a JSON-RPC error, an unknown tool, a result past the cap', async () => {
    const c = await open(stdio());
    expect((await failure(call(c, 'bad_result'))).code).toBe(MCP_BAD_RESULT);
    const thrown = await failure(call(c, 'throws'));
    expect(thrown.code).toBe(MCP_REQUEST_FAILED);
    expect(thrown.message).toContain('the handler blew up');
    expect((await failure(call(c, 'no_such_tool'))).code).toBe(MCP_REQUEST_FAILED);
    const huge = await call(c, 'huge');
    expect(huge.content.length).toBeLessThan(64 * 1024 + 100);
    expect(huge.content).toMatch(/\[… \d+ more characters cut: the result was longer than 65536\]$/);
    expect(await call(c, 'echo', { text: 'still fine' })).toEqual({ status: 'ok', content: 'echo: still fine' });
  });

  it('runs in the workspace, with only the harmless variables and those the row names: none of bridle\'s secrets', async () => {
    process.env.BRIDLE_TEST_SECRET_TOKEN = 'sk-should-not-leak';
    try {
      const ws = workspace();
      const c = await open({ ...stdio(), env: { GIVEN_BY_ROW: 'yes' } }, ws);
      const names = (await call(c, 'env')).content.split(',');
      expect(names).toContain('GIVEN_BY_ROW');
      expect(names).toContain('PATH');
      expect(names).not.toContain('BRIDLE_TEST_SECRET_TOKEN');
      expect(names.every((n) => ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'GIVEN_BY_ROW'].includes(n))).toBe(true);
      expect((await call(c, 'write_note', { file: 'a.txt', text: 'x' })).content).toBe(`wrote a.txt in ${ws}`);
      expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('x');
    } finally {
      delete process.env.BRIDLE_TEST_SECRET_TOKEN;
    }
  });

  it('a server that dies mid-call: MCP_SERVER_EXITED with its last words, and every later call fails at once with the same', async () => {
    const c = await open(stdio());
    const crashed = await failure(call(c, 'crash'));
    expect(crashed.code).toBe(MCP_SERVER_EXITED);
    expect(crashed.message).toBe('The MCP server mcp:fx exited during this call; its tools are unavailable for the rest of this session. Its last words on stderr: fixture: crashing on purpose');
    const t0 = performance.now();
    const later = await failure(call(c, 'echo', { text: 'anyone?' }));
    expect(later.code).toBe(MCP_SERVER_EXITED);
    expect(later.message).toMatch(/^The MCP server mcp:fx exited; its tools are unavailable/);
    expect(performance.now() - t0).toBeLessThan(50);
  });

  it('an MCP call past its deadline is cancelled and uncertain (TOOL_TIMEOUT, status unknown): the server never confirms it stopped; it goes on answering', async () => {
    const c = await open(stdio());
    const { tools } = bridleTools('mcp:fx', c.tools, c.call, 150);
    const slow = tools.find((t) => t.name === 'mcp__fx__slow')!;
    const echo = tools.find((t) => t.name === 'mcp__fx__echo')!;
    const ctx = { fs: undefined as never, subprocess: undefined as never, signal: new AbortController().signal };
    const out = await executeTool(slow, { ms: 5000 }, ctx);
    expect(out).toMatchObject({ status: 'unknown', code: 'TOOL_TIMEOUT' });
    expect(out.content).toContain('may or may not have happened');
    expect(await executeTool(echo, { text: 'still alive' }, ctx)).toEqual({ status: 'ok', content: 'echo: still alive' });
    const aborted = new AbortController();
    const running = call(c, 'slow', { ms: 5000 }, aborted.signal);
    aborted.abort(new Error('the user cancelled'));
    await expect(running).rejects.toThrow('the user cancelled');
  });

  it('close() ends the server\'s process, and is idempotent', async () => {
    const c = await open(stdio());
    const pid = Number((await call(c, 'pid')).content);
    expect(() => process.kill(pid, 0)).not.toThrow();
    await Promise.all([c.close(), c.close()]);
    expect(() => process.kill(pid, 0)).toThrow();
    expect((await failure(call(c, 'echo', { text: 'x' }))).code).toBe(MCP_SERVER_EXITED);
  });

  it('a server that does not start is one McpStartError saying why, and leaves no process behind', async () => {
    const start = (config: Record<string, unknown>) => open(config).then(() => undefined, (e: unknown) => e as McpStartError);
    const missing = await start({ command: '/nonexistent/mcp-server' });
    expect(missing).toBeInstanceOf(McpStartError);
    expect(missing!.message).toBe('the MCP server mcp:fx did not start: cannot run /nonexistent/mcp-server (no such command).');
    expect((await start(stdio('--exit-at-start')))!.message).toBe('the MCP server mcp:fx did not start: it exited before it had started. Its last words on stderr: fixture: refusing to start');
    const marker = `marker-${randomUUID()}`;
    const slow = await start({ ...stdio('--start-delay', '5000', marker), startTimeoutMs: 300 });
    expect(slow!.message).toBe('the MCP server mcp:fx did not start: it did not answer initialize and tools/list within 300 ms.');
    expect(running(marker)).toEqual([]);
  });

  it('a server that offers no tools starts with none', async () => {
    expect((await open(stdio('--no-tools'))).tools).toEqual([]);
  });
});

describe('an MCP server over streamable HTTP', () => {
  it('sends the row\'s headers, answers calls; a server gone away is MCP_UNREACHABLE; a refused start is an McpStartError', async () => {
    http = await startHttpFixture();
    const c = await open({ url: http.url, headers: { Authorization: 'Bearer fixture-token' } });
    expect(c.tools.map((t) => t.name)).toContain('echo');
    expect(await call(c, 'echo', { text: 'over http' })).toEqual({ status: 'ok', content: 'echo: over http' });
    // A 2025 server: the 2026 probe first, refused, then the 2025 handshake.
    expect(http.methods.slice(0, 4)).toEqual(['server/discover', 'initialize', 'notifications/initialized', 'tools/list']);
    await http.close();
    http = undefined;
    expect((await failure(call(c, 'echo', { text: 'x' }))).code).toBe(MCP_UNREACHABLE);

    http = await startHttpFixture();
    const refused = await open({ url: http.url, headers: { Authorization: 'Bearer wrong' } }).then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(McpStartError);
    expect((refused as Error).message).toBe('the MCP server mcp:fx did not start: Version negotiation failed: the server requires authorization (HTTP 401).');
  });
});

describe('an answer larger than one message may be (issue 20, item 8)', () => {
  const flood = () => open({ command: process.execPath, args: [FLOOD] });

  for (const order of ['last', 'first'] as const) {
    it(`a 50 MB result (its id ${order}) is MCP_RESULT_TOO_LARGE with its size, not MCP_SERVER_EXITED; the same server answers the next call`, async () => {
      const c = await flood();
      const pid = (await call(c, 'pid')).content;
      const err = await failure(call(c, 'flood', { mb: 50, order }));
      expect(err.code).toBe(MCP_RESULT_TOO_LARGE);
      expect(err.message).toContain('answered the flood call with 50.0 MiB');
      expect(err.message).toContain('The server is still running');
      expect(await call(c, 'small')).toEqual({ status: 'ok', content: 'small and fine' });
      expect((await call(c, 'pid')).content).toBe(pid);
    });
  }

  it('a huge line naming no request fails the calls waiting, as too large, and the connection goes on', async () => {
    const c = await flood();
    const err = await failure(call(c, 'flood', { mb: 12, order: 'none' }));
    expect(err.code).toBe(MCP_RESULT_TOO_LARGE);
    expect(err.message).toContain('with 12.0 MiB');
    expect(await call(c, 'small')).toEqual({ status: 'ok', content: 'small and fine' });
  });
});
