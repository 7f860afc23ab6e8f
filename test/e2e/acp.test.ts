/**
 * `bridle acp` as an editor runs it: the built CLI as a child process on
 * stdio, driven by the official SDK's client side. A turn with tool calls,
 * streamed updates and a permission question; a cancel mid-tool; a load of
 * the session from a new process; a client that goes away mid-turn; hostile
 * bytes on stdin. Every log it leaves passes `bridle replay`.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { methods, RequestError } from '@agentclientprotocol/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseLog } from '../../log/parse.js';
import type { Entry } from '../../log/entries.js';
import { choose, recordingClient, spawnAcp, streamedText, until, updatesOf, type AcpChild } from '../helpers/acp.js';
import { CLI, runCli } from '../helpers/cli.js';
import { describeWithSystemDep, SYSTEM_DEPS } from '../helpers/system-deps.js';
import { tempDir } from '../helpers/temp.js';

let root: string;
let home: string;
let ws: string;
const children: AcpChild[] = [];
beforeEach(() => {
  root = realpathSync(tempDir('bridle-acp-e2e-'));
  home = join(root, 'home');
  ws = join(root, 'ws');
  mkdirSync(ws);
});
afterEach(() => {
  for (const c of children.splice(0)) c.child.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

function script(responses: unknown[]): string {
  const file = join(root, `script-${children.length}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ responses }));
  return file;
}

function acp(args: string[], env: NodeJS.ProcessEnv = {}): AcpChild {
  const c = spawnAcp(['--cwd', ws, '--sandbox', 'off', ...args], { BRIDLE_HOME: home, ...env });
  children.push(c);
  return c;
}

const logOf = (id: string): Entry[] => parseLog(readFileSync(join(home, 'sessions', `${id}.jsonl`), 'utf8')).entries;

async function replays(id: string): Promise<void> {
  const r = await runCli(['replay', id, '--json'], { env: { BRIDLE_HOME: home } });
  expect(r.stderr).toBe('');
  expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, violations: [] });
  expect(r.code).toBe(0);
}

describe('bridle acp (the CLI, on stdio)', () => {
  it('initialize, new, a prompt with tool calls, streamed updates and a permission question; stdin closed: exit 0, the log replays', async () => {
    const model = `scripted:${script([{ text: 'Let me write it.', toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'from acp\n' } }, { name: 'read_file', arguments: { path: 'out.txt' } }] }, { text: 'Wrote out.txt.' }])}`;
    const c = acp(['--model', model, '--approval', 'ask']);
    const { app, record } = recordingClient();
    const { sessionId, init, res } = await app.connectWith(c.stream, async (ctx) => {
      const init = await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'sdk-client', version: '1' } });
      const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
      return { sessionId, init, res: await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'write out.txt' }] }) };
    });
    expect(init).toMatchObject({ protocolVersion: 1, agentCapabilities: { loadSession: true }, authMethods: [] });
    expect(res).toEqual({ stopReason: 'end_turn' });
    expect(streamedText(record)).toBe('Let me write it.Wrote out.txt.');
    expect(updatesOf(record, 'tool_call').map((u) => [u.title, u.kind])).toEqual([
      ['write_file out.txt (9 bytes)', 'edit'],
      ['read_file out.txt', 'read'],
    ]);
    // Only the write asks; the read is read-only.
    expect(record.permissions.map((p) => p.toolCall.toolCallId)).toEqual(['t1.s1.c1']);
    expect(updatesOf(record, 'tool_call_update').filter((u) => u.status === 'completed').map((u) => u.toolCallId)).toEqual(['t1.s1.c1', 't1.s1.c2']);
    expect(readFileSync(join(ws, 'out.txt'), 'utf8')).toBe('from acp\n');
    expect(await c.end()).toBe(0);
    expect(logOf(sessionId).find((e) => e.kind === 'approval/decided')).toMatchObject({ outcome: 'allowed-once', by: 'acp:sdk-client' });
    await replays(sessionId);
  });

  it('session/new with _meta.traceparent: the session logs it, so its spans hang under the client’s trace (ADR 0055)', async () => {
    const c = acp(['--model', `scripted:${script([{ text: 'hi' }])}`]);
    const { app } = recordingClient();
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const sessionId = await app.connectWith(c.stream, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'sdk-client', version: '1' } });
      const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: ws, mcpServers: [], _meta: { traceparent } });
      await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
      return sessionId;
    });
    expect(await c.end()).toBe(0);
    expect(logOf(sessionId)[0]).toMatchObject({ kind: 'session/start', traceparent });
  });

  it('session/cancel mid-tool: the prompt answers cancelled, bash is killed (ABORTED), the next call never dispatched (ABORTED_BEFORE_DISPATCH); the log replays', async () => {
    const model = `scripted:${script([{ toolCalls: [{ name: 'bash', arguments: { command: 'sleep 60' } }, { name: 'write_file', arguments: { path: 'late.txt', content: 'x' } }] }])}`;
    const c = acp(['--model', model, '--approval', 'auto']);
    const { app, record } = recordingClient();
    const { sessionId, res, ms } = await app.connectWith(c.stream, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
      const running = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'go' }] });
      await until(() => updatesOf(record, 'tool_call_update').some((u) => u.status === 'in_progress'), 15_000, 'bash to start');
      const t0 = Date.now();
      await ctx.notify(methods.agent.session.cancel, { sessionId });
      const res = await running;
      return { sessionId, res, ms: Date.now() - t0 };
    });
    expect(res).toEqual({ stopReason: 'cancelled' });
    expect(ms).toBeLessThan(10_000);
    expect(await c.end()).toBe(0);
    expect(logOf(sessionId).filter((e) => e.kind === 'tool/result').map((r) => r.code)).toEqual(['ABORTED', 'ABORTED_BEFORE_DISPATCH']);
    expect(existsSync(join(ws, 'late.txt'))).toBe(false);
    await replays(sessionId);
  });

  it('session/load in a new process streams the session back from its log; the loaded session takes a prompt', async () => {
    const first = acp(['--model', `scripted:${script([{ text: 'Reading.', toolCalls: [{ name: 'list_dir', arguments: {} }] }, { text: 'Nothing here.' }])}`]);
    const sessionId = await recordingClient().app.connectWith(first.stream, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
      await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'what is here?' }] });
      return sessionId;
    });
    expect(await first.end()).toBe(0);

    const second = acp(['--model', `scripted:${script([{ text: 'Still nothing.' }])}`]);
    const { app, record } = recordingClient();
    const res = await app.connectWith(second.stream, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      await ctx.request(methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
      return ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'and now?' }] });
    });
    expect(res.stopReason).toBe('end_turn');
    expect(streamedText(record, 'user_message_chunk')).toBe('what is here?');
    expect(streamedText(record)).toBe('Reading.Nothing here.Still nothing.');
    expect(updatesOf(record, 'tool_call')).toEqual([expect.objectContaining({ toolCallId: 't1.s1.c1', title: 'list_dir .', kind: 'read' })]);
    expect(await second.end()).toBe(0);
    expect(logOf(sessionId).filter((e) => e.kind === 'turn/end').map((e) => e.reason)).toEqual(['completed', 'completed']);
    await replays(sessionId);
  });

  it("session/load with a cwd other than the session's logged workspace is refused WORKSPACE_CHANGED naming both (it ran in the client's tree, the log claiming the first)", async () => {
    const first = acp(['--model', `scripted:${script([{ text: 'Hi.' }])}`]);
    const sessionId = await recordingClient().app.connectWith(first.stream, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
      await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
      return sessionId;
    });
    expect(await first.end()).toBe(0);
    const before = readFileSync(join(home, 'sessions', `${sessionId}.jsonl`), 'utf8');
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);

    const second = acp(['--model', `scripted:${script([{ text: 'Again.' }])}`]);
    const refused = await recordingClient().app.connectWith(second.stream, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      return ctx.request(methods.agent.session.load, { sessionId, cwd: elsewhere, mcpServers: [] }).then(
        () => undefined,
        (err: unknown) => err,
      );
    });
    expect(refused).toBeInstanceOf(RequestError);
    expect((refused as RequestError).data).toMatchObject({ reason: 'WORKSPACE_CHANGED' });
    expect((refused as RequestError).message).toContain(`runs in ${ws}, as its log says; ${elsewhere} is another workspace`);
    expect(await second.end()).toBe(0);
    expect(readFileSync(join(home, 'sessions', `${sessionId}.jsonl`), 'utf8')).toBe(before);
  });

  it('a client that disconnects mid-turn: the turn is cancelled and ends before session/end, the process exits 0, the log replays', async () => {
    const c = acp(['--model', `scripted:${script([{ toolCalls: [{ name: 'bash', arguments: { command: 'sleep 60' } }] }])}`, '--approval', 'auto']);
    const { app, record } = recordingClient();
    const conn = app.connect(c.stream);
    await conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await conn.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    void conn.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'go' }] }).catch(() => undefined);
    await until(() => updatesOf(record, 'tool_call_update').some((u) => u.status === 'in_progress'), 15_000, 'bash to start');
    c.child.stdin.end();
    expect(await c.end()).toBe(0);
    const log = logOf(sessionId);
    expect(log.find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'aborted' });
    expect(log.find((e) => e.kind === 'tool/result')).toMatchObject({ code: 'ABORTED' });
    // The aborted turn's closing entries, then `session/end`, last: `bridle sessions` lists it ended, not idle.
    const kinds = log.map((e) => e.kind);
    expect(kinds.at(-1)).toBe('session/end');
    expect(kinds.indexOf('session/end')).toBeGreaterThan(kinds.lastIndexOf('turn/end'));
    const listed = await runCli(['sessions', '--json'], { env: { BRIDLE_HOME: home } });
    expect(listed.stdout).toContain('"ended"');
    await replays(sessionId);
  });

  it('hostile bytes on stdin (bad JSON, a batch, a 33 MiB frame, wrong params, an unknown method) get JSON-RPC errors and the agent stays up', async () => {
    const child = spawn(process.execPath, [CLI, 'acp', '--cwd', ws, '--model', `scripted:${script([])}`], { env: { PATH: process.env.PATH, BRIDLE_HOME: home }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const lines = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id?: unknown; error?: { code: number; data?: { reason?: string } }; result?: unknown });
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const send = (s: string) => new Promise<void>((r) => child.stdin.write(s, () => r()));
    await send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n');
    await send('this is not json\n');
    await send('[{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}]\n');
    await send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"x","prompt":[{"type":"text","text":"${'a'.repeat(33 * 1024 * 1024)}"}]}}\n`);
    await send('{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":42}}\n');
    await send('{"jsonrpc":"2.0","id":5,"method":"session/teleport","params":{}}\n');
    await send('{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":"' + ws + '","mcpServers":[]}}\n');
    await until(() => lines().some((l) => l.id === 6), 20_000, 'the last answer');
    const byId = new Map(lines().map((l) => [l.id, l]));
    expect(byId.get(1)?.result).toMatchObject({ protocolVersion: 1 });
    const nulls = lines().filter((l) => l.id === null).map((l) => l.error?.code);
    expect(nulls).toEqual([-32700, -32600]);
    expect(byId.get(3)?.error).toMatchObject({ code: -32600, data: { reason: 'MESSAGE_TOO_LARGE' } });
    expect(byId.get(4)?.error?.code).toBe(-32602);
    expect(byId.get(5)?.error?.code).toBe(-32601);
    expect(byId.get(6)?.result).toMatchObject({ sessionId: expect.any(String) });
    child.stdin.end();
    expect(await exited).toBe(0);
  }, 60_000);

  it('a client that answers a permission question with an error denies the call; the session goes on', async () => {
    const c = acp(['--model', `scripted:${script([{ toolCalls: [{ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } }] }, { text: 'Denied, so I stop.' }])}`]);
    const { app, record } = recordingClient(() => {
      throw new RequestError(-32603, 'the dialog crashed');
    });
    const { sessionId, res } = await app.connectWith(c.stream, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
      return { sessionId, res: await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'go' }] }) };
    });
    expect(res.stopReason).toBe('end_turn');
    expect(record.permissions).toHaveLength(1);
    expect(existsSync(join(ws, 'x.txt'))).toBe(false);
    expect(await c.end()).toBe(0);
    expect(logOf(sessionId).find((e) => e.kind === 'approval/decided')).toMatchObject({ outcome: 'unavailable' });
    await replays(sessionId);
  });
});

describeWithSystemDep('bridle acp: bash in the client\'s terminal, under bwrap', SYSTEM_DEPS.bwrap, (bwrap) => {
  it('the terminal runs the bwrap-wrapped command: writes outside the workspace fail, inside succeed', async () => {
    const patch = join(root, 'terminal.yaml');
    writeFileSync(patch, 'patch:\n  - { id: subprocess, use: acp-client }\n');
    const outside = join(root, 'outside.txt');
    const model = `scripted:${script([{ toolCalls: [{ name: 'bash', arguments: { command: `touch ${outside}; echo inside > in.txt; echo done` } }] }, { text: 'ok' }])}`;
    const c = spawnAcp(['--cwd', ws, '--sandbox', 'bwrap', '--approval', 'auto', '--patch', patch, '--model', model], { BRIDLE_HOME: home, BRIDLE_BWRAP: bwrap });
    children.push(c);
    const created: { command: string; args: string[] }[] = [];
    const { app } = recordingClient();
    app
      .onRequest(methods.client.terminal.create, ({ params }) => {
        created.push({ command: params.command, args: params.args ?? [] });
        const child = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? undefined });
        let output = '';
        child.stdout.on('data', (d) => (output += d));
        child.stderr.on('data', (d) => (output += d));
        const exit = new Promise<{ exitCode: number | null; signal: string | null }>((r) => child.on('close', (exitCode, signal) => r({ exitCode, signal })));
        terms.set(`t${created.length}`, { output: () => output, exit, kill: () => child.kill('SIGKILL') });
        return { terminalId: `t${created.length}` };
      })
      .onRequest(methods.client.terminal.waitForExit, ({ params }) => terms.get(params.terminalId)!.exit)
      .onRequest(methods.client.terminal.output, ({ params }) => ({ output: terms.get(params.terminalId)!.output(), truncated: false }))
      .onRequest(methods.client.terminal.kill, ({ params }) => void terms.get(params.terminalId)!.kill())
      .onRequest(methods.client.terminal.release, () => ({}));
    const terms = new Map<string, { output: () => string; exit: Promise<{ exitCode: number | null; signal: string | null }>; kill: () => void }>();
    const sessionId = await app.connectWith(c.stream, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: { terminal: true } });
      const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
      await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'go' }] });
      return sessionId;
    });
    expect(await c.end()).toBe(0);
    // The probe, then the command: both wrapped in bwrap, behind `env -i`.
    expect(created.length).toBe(2);
    for (const t of created) {
      expect(t.command).toBe('env');
      expect(t.args).toContain(bwrap);
    }
    expect(existsSync(outside)).toBe(false);
    expect(readFileSync(join(ws, 'in.txt'), 'utf8')).toBe('inside\n');
    expect(logOf(sessionId).find((e) => e.kind === 'tool/result')?.content).toContain('done');
    await replays(sessionId);
  });
});
