/**
 * `bridle acp` in process: the agent `cli/acp.ts` starts (the product
 * composed as the CLI composes it, sessions opened through `open-session.ts`)
 * driven by the official SDK's client side (`client()` from
 * `@agentclientprotocol/sdk`), connected app to app. Every log it leaves
 * verifies.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { methods, RequestError } from '@agentclientprotocol/sdk';
import { describe, expect, it } from 'vitest';
import { verifyLog } from '../log/verify.js';
import type { Entry, EntryOf } from '../log/entries.js';
import { createAcpAgent } from '../server/acp/agent.js';
import { choose, recordingClient, streamedText, until, updatesOf, type PermissionAnswer } from '../test/helpers/acp.js';
import { useAcpWorld, writeCall } from '../test/helpers/acp-world.js';
import { acpOpener, authMethodsOf, mcpRowsMount } from './acp.js';
import { composeProduct, type SettingFlags } from './settings.js';

const w = useAcpWorld();

describe('bridle acp, in process, through the SDK client', () => {
  it('initialize: protocol version 1, loadSession, text and embedded context, no auth for a scripted model', async () => {
    const agent = await w.agentWith({ model: `scripted:${w.script([])}` });
    const { app } = recordingClient();
    const init = await app.connectWith(agent.app, (ctx) => ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} }));
    expect(init).toMatchObject({
      protocolVersion: 1,
      agentCapabilities: { loadSession: true, promptCapabilities: { image: false, audio: false, embeddedContext: true }, mcpCapabilities: { sse: false } },
      authMethods: [],
      agentInfo: { name: 'bridle' },
    });
  });

  it('names OPENAI_API_KEY as the auth method when the model needs a key the environment lacks, and none for a loopback server', async () => {
    const remote = await composeProduct({ model: 'gpt-4o-mini' }, { env: { BRIDLE_HOME: w.home } });
    expect(authMethodsOf(remote, {})).toEqual([expect.objectContaining({ id: 'openai-api-key', name: 'OPENAI_API_KEY' })]);
    expect(authMethodsOf(remote, { OPENAI_API_KEY: 'sk-x' })).toEqual([]);
    const local = await composeProduct({ model: 'qwen', baseUrl: 'http://127.0.0.1:11434/v1' }, { env: { BRIDLE_HOME: w.home } });
    expect(authMethodsOf(local, {})).toEqual([]);
  });

  it('new + prompt: thought and message chunks stream, a tool call goes pending → in_progress → completed with a diff, the stop reason is end_turn, the log verifies', async () => {
    const agent = await w.agentWith({ model: `scripted:${w.script([{ reasoning: 'Plan: write.', text: 'Writing it.', toolCalls: [writeCall('out.txt', 'hello\n')] }, { text: 'Done.' }])}` });
    const { app, record } = recordingClient();
    const { sessionId, res } = await app.connectWith(agent.app, async (ctx) => {
      const sessionId = await w.start(ctx);
      return { sessionId, res: await w.prompt(ctx, sessionId, 'write out.txt') };
    });
    expect(res).toEqual({ stopReason: 'end_turn' });
    expect(streamedText(record, 'agent_thought_chunk')).toBe('Plan: write.');
    expect(streamedText(record)).toBe('Writing it.Done.');
    const call = updatesOf(record, 'tool_call')[0]!;
    expect(call).toMatchObject({ toolCallId: 't1.s1.c1', title: 'write_file out.txt (6 bytes)', kind: 'edit', status: 'pending', locations: [{ path: join(w.ws, 'out.txt') }] });
    const statuses = updatesOf(record, 'tool_call_update').map((u) => u.status);
    expect(statuses).toEqual(['in_progress', 'completed']);
    expect(updatesOf(record, 'tool_call_update')[1]!.content).toEqual([
      { type: 'content', content: { type: 'text', text: 'Created out.txt (6 bytes written).' } },
      { type: 'diff', path: join(w.ws, 'out.txt'), newText: 'hello\n' },
    ]);
    // The order the client saw: text, then the call, its question, its result, then the answer's text.
    const kinds = record.updates.map((n) => n.update.sessionUpdate);
    expect(kinds.indexOf('tool_call')).toBeGreaterThan(kinds.lastIndexOf('agent_thought_chunk'));
    expect(kinds.lastIndexOf('agent_message_chunk')).toBeGreaterThan(kinds.lastIndexOf('tool_call_update'));
    expect(record.permissions).toHaveLength(1);
    expect(record.permissions[0]).toMatchObject({ sessionId, toolCall: { toolCallId: 't1.s1.c1', kind: 'edit' } });
    expect(record.permissions[0]!.options.map((o) => o.kind)).toEqual(['allow_once', 'allow_always', 'reject_once', 'reject_always']);
    expect(readFileSync(join(w.ws, 'out.txt'), 'utf8')).toBe('hello\n');
    const log = w.logOf(sessionId);
    expect(verifyLog(log).violations).toEqual([]);
    expect(log.find((e) => e.kind === 'approval/decided')).toMatchObject({ outcome: 'allowed-once', by: 'acp:test-client' });
  });

  it.each<[string, PermissionAnswer, string, string]>([
    ['reject once', () => choose('reject-once'), 'rejected', 'failed'],
    ['a client that errors', () => Promise.reject(new RequestError(-32603, 'the editor broke')), 'unavailable', 'failed'],
    ['an option it was not offered', () => choose('yes-please'), 'unavailable', 'failed'],
    ['a cancelled question', () => ({ outcome: { outcome: 'cancelled' } }), 'cancelled', 'failed'],
  ])('a permission request answered by %s denies the call: nothing dispatched, nothing written, the log verifies', async (_, answer, outcome, status) => {
    const agent = await w.agentWith({ model: `scripted:${w.script([{ toolCalls: [writeCall('no.txt', 'x')] }, { text: 'ok.' }])}` });
    const { app, record } = recordingClient(answer);
    const { sessionId, res } = await app.connectWith(agent.app, async (ctx) => {
      const sessionId = await w.start(ctx);
      return { sessionId, res: await w.prompt(ctx, sessionId, 'go') };
    });
    expect(res.stopReason).toBe('end_turn');
    expect(updatesOf(record, 'tool_call_update').at(-1)).toMatchObject({ toolCallId: 't1.s1.c1', status });
    const log = w.logOf(sessionId);
    expect(log.find((e) => e.kind === 'approval/decided')).toMatchObject({ outcome });
    expect(log.find((e) => e.kind === 'tool/dispatch')).toBeUndefined();
    expect(() => readFileSync(join(w.ws, 'no.txt'))).toThrow();
    expect(verifyLog(log).violations).toEqual([]);
  });

  it('allow always: the second identical call is not asked, the rule is logged; reject always: the second identical call is rejected unasked', async () => {
    const agent = await w.agentWith({
      model: `scripted:${w.script([
        { toolCalls: [writeCall('a.txt', '1')] },
        { toolCalls: [writeCall('a.txt', '2')] },
        { toolCalls: [writeCall('b.txt', '1')] },
        { toolCalls: [writeCall('b.txt', '2')] },
        { text: 'done' },
      ])}`,
    });
    const { app, record } = recordingClient((req) => choose(req.toolCall.rawInput && (req.toolCall.rawInput as { path: string }).path === 'a.txt' ? 'allow-always' : 'reject-always'));
    const sessionId = await app.connectWith(agent.app, async (ctx) => {
      const sessionId = await w.start(ctx);
      await w.prompt(ctx, sessionId, 'go');
      return sessionId;
    });
    expect(record.permissions.map((p) => (p.toolCall.rawInput as { path: string }).path)).toEqual(['a.txt', 'b.txt']);
    expect(readFileSync(join(w.ws, 'a.txt'), 'utf8')).toBe('2');
    expect(() => readFileSync(join(w.ws, 'b.txt'))).toThrow();
    const decided = w.logOf(sessionId).filter((e) => e.kind === 'approval/decided');
    expect(decided.map((d) => [d.outcome, d.by])).toEqual([
      ['allowed-always', 'acp:test-client'],
      ['rejected', 'acp:test-client (rejected always)'],
      ['rejected', 'acp:test-client (rejected always)'],
    ]);
    expect(decided[0]).toMatchObject({ rule: { tool: 'write_file' } });
    expect(verifyLog(w.logOf(sessionId)).violations).toEqual([]);
  });

  it('session/cancel mid-tool: the running call ends ABORTED, the one never dispatched ABORTED_BEFORE_DISPATCH, the stop reason is cancelled, the log verifies', async () => {
    const agent = await w.agentWith({ approval: 'auto', model: `scripted:${w.script([{ toolCalls: [{ name: 'bash', arguments: { command: 'sleep 30' } }, writeCall('late.txt', 'x')] }, { text: 'never' }])}` });
    const { app, record } = recordingClient();
    const { sessionId, res } = await app.connectWith(agent.app, async (ctx) => {
      const sessionId = await w.start(ctx);
      const running = w.prompt(ctx, sessionId, 'go');
      await until(() => updatesOf(record, 'tool_call_update').some((u) => u.status === 'in_progress'), 10_000, 'bash to start');
      await ctx.notify(methods.agent.session.cancel, { sessionId });
      return { sessionId, res: await running };
    });
    expect(res).toEqual({ stopReason: 'cancelled' });
    const results = w.logOf(sessionId).filter((e) => e.kind === 'tool/result');
    expect(results.map((r) => [r.name, r.status, r.code])).toEqual([
      ['bash', 'aborted', 'ABORTED'],
      ['write_file', 'aborted', 'ABORTED_BEFORE_DISPATCH'],
    ]);
    expect(updatesOf(record, 'tool_call_update').filter((u) => u.status === 'failed')).toHaveLength(2);
    expect(w.logOf(sessionId).find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'aborted' });
    expect(verifyLog(w.logOf(sessionId)).violations).toEqual([]);
  });

  it('a client that disconnects mid-turn: the turn is cancelled, the log is closed and verifies', async () => {
    const agent = await w.agentWith({ approval: 'auto', model: `scripted:${w.script([{ toolCalls: [{ name: 'bash', arguments: { command: 'sleep 30' } }] }, { text: 'never' }])}` });
    const { app, record } = recordingClient();
    const conn = app.connect(agent.app);
    const sessionId = await w.start(conn.agent);
    void w.prompt(conn.agent, sessionId, 'go').catch(() => undefined);
    await until(() => updatesOf(record, 'tool_call_update').some((u) => u.status === 'in_progress'), 10_000, 'bash to start');
    conn.close();
    await agent.closed;
    const log = w.logOf(sessionId);
    expect(log.find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'aborted' });
    expect(log.find((e) => e.kind === 'tool/result')).toMatchObject({ status: 'aborted', code: 'ABORTED' });
    expect(verifyLog(log).violations).toEqual([]);
  });

  it('a client that disconnects while asked: the question denies, the turn ends, the log verifies', async () => {
    const agent = await w.agentWith({ model: `scripted:${w.script([{ toolCalls: [writeCall('x.txt', 'x')] }, { text: 'never' }])}` });
    const { app, record } = recordingClient(() => new Promise(() => undefined));
    const conn = app.connect(agent.app);
    const sessionId = await w.start(conn.agent);
    void w.prompt(conn.agent, sessionId, 'go').catch(() => undefined);
    await until(() => record.permissions.length === 1, 10_000, 'the question');
    conn.close();
    await agent.closed;
    const log = w.logOf(sessionId);
    expect(log.find((e) => e.kind === 'approval/decided')?.outcome).toMatch(/^(cancelled|unavailable)$/);
    expect(log.find((e) => e.kind === 'tool/dispatch')).toBeUndefined();
    expect(verifyLog(log).violations).toEqual([]);
  });

  it('session/load of an existing session streams its history from the log, then a prompt continues it', async () => {
    const file = w.script([{ reasoning: 'Hmm.', text: 'Writing.', toolCalls: [writeCall('h.txt', 'v1\n')] }, { text: 'First done.' }, { text: 'Second answer.' }]);
    const first = await w.agentWith({ approval: 'auto', model: `scripted:${file}` });
    const sessionId = await recordingClient().app.connectWith(first.app, async (ctx) => {
      const id = await w.start(ctx);
      await w.prompt(ctx, id, 'first prompt');
      return id;
    });
    await first.close();

    // A new agent (a restarted editor) loads it; the script's third answer is the next prompt's.
    const second = await w.agentWith({ approval: 'auto', model: `scripted:${w.script([{ text: 'Second answer.' }])}` });
    const { app, record } = recordingClient();
    const res = await app.connectWith(second.app, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      expect(await ctx.request(methods.agent.session.load, { sessionId, cwd: w.ws, mcpServers: [] })).toEqual({ configOptions: [expect.objectContaining({ id: 'approval' }), expect.objectContaining({ id: 'model' })] });
      return w.prompt(ctx, sessionId, 'second prompt');
    });
    expect(res.stopReason).toBe('end_turn');
    const kinds = record.updates.map((n) => n.update.sessionUpdate);
    expect(kinds.slice(0, 6)).toEqual(['user_message_chunk', 'agent_thought_chunk', 'agent_message_chunk', 'tool_call', 'tool_call_update', 'tool_call_update']);
    expect(streamedText(record, 'user_message_chunk')).toBe('first prompt');
    expect(updatesOf(record, 'tool_call')[0]).toMatchObject({ toolCallId: 't1.s1.c1', title: 'write_file h.txt (3 bytes)', status: 'pending' });
    expect(updatesOf(record, 'tool_call_update').map((u) => u.status)).toEqual(['in_progress', 'completed']);
    expect(streamedText(record)).toBe('Writing.First done.Second answer.');
    const log = w.logOf(sessionId);
    expect(log.filter((e) => e.kind === 'turn/end')).toHaveLength(2);
    expect(verifyLog(log).violations).toEqual([]);
  });

  it('session/load of a session another agent holds is refused SESSION_LOCKED naming the holder, not -32603 Internal error; the holder goes on', async () => {
    const holder = await w.agentWith({ approval: 'auto', model: `scripted:${w.script([{ text: 'first' }, { text: 'still mine' }])}` });
    let sessionId = '';
    let letGo!: () => void;
    const tried = new Promise<void>((r) => (letGo = r));
    // The holder keeps its connection (and so the session's writer lock) open until the second agent has tried.
    const holding = recordingClient().app.connectWith(holder.app, async (ctx) => {
      sessionId = await w.start(ctx);
      await w.prompt(ctx, sessionId, 'first');
      await tried;
      return w.prompt(ctx, sessionId, 'again');
    });
    await until(() => sessionId !== '' && holder.sessions.get(sessionId)?.prompting === false && w.logOf(sessionId).some((e) => e.kind === 'turn/end'));
    const other = await w.agentWith({ approval: 'auto', model: `scripted:${w.script([])}` });
    const refused = await recordingClient().app.connectWith(other.app, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      return ctx.request(methods.agent.session.load, { sessionId, cwd: w.ws, mcpServers: [] }).then(() => undefined, (e: unknown) => e);
    });
    letGo();
    expect(refused).toMatchObject({ code: -32003, data: { reason: 'SESSION_LOCKED' }, message: expect.stringContaining(`session is being written by pid ${process.pid}`) });
    expect(await holding).toEqual({ stopReason: 'end_turn' });
    expect(verifyLog(w.logOf(sessionId)).violations).toEqual([]);
  });

  it('a refused read_file of /root/.ssh/id_rsa sends the editor no location; one through a link out of the workspace has its location taken back', async () => {
    mkdirSync(join(w.root, 'outside'));
    writeFileSync(join(w.root, 'outside', 'secret.txt'), 'secret\n');
    symlinkSync(join(w.root, 'outside'), join(w.ws, 'link'));
    const agent = await w.agentWith({ model: `scripted:${w.script([{ toolCalls: [{ name: 'read_file', arguments: { path: '/root/.ssh/id_rsa' } }, { name: 'read_file', arguments: { path: 'link/secret.txt' } }] }, { text: 'Could not.' }])}` });
    const { app, record } = recordingClient();
    const res = await app.connectWith(agent.app, async (ctx) => w.prompt(ctx, await w.start(ctx), 'read the keys'));
    expect(res.stopReason).toBe('end_turn');
    const [direct, linked] = updatesOf(record, 'tool_call');
    expect(direct).toMatchObject({ toolCallId: 't1.s1.c1', locations: [] });
    expect(linked).toMatchObject({ toolCallId: 't1.s1.c2', locations: [{ path: join(w.ws, 'link', 'secret.txt') }] });
    const failed = updatesOf(record, 'tool_call_update').filter((u) => u.status === 'failed');
    expect(failed.map((u) => [u.toolCallId, (u.rawOutput as { code?: string }).code])).toEqual([['t1.s1.c1', 'OUTSIDE_WORKSPACE'], ['t1.s1.c2', 'OUTSIDE_WORKSPACE']]);
    expect(failed.find((u) => u.toolCallId === 't1.s1.c2')).toMatchObject({ locations: [] });
    // Nothing that names a path outside the workspace reached the editor as a location.
    const sent = record.updates.flatMap((n) => ('locations' in n.update ? (n.update.locations ?? []) : []));
    expect(sent.every((l) => l.path.startsWith(`${w.ws}/`))).toBe(true);
  });

  it('stop reasons: max_turn_requests, max_tokens, refusal; a failed turn is a JSON-RPC error naming its code', async () => {
    const cases: [SettingFlags, unknown[], unknown][] = [
      [{ maxSteps: '1' }, [{ toolCalls: [{ name: 'list_dir', arguments: {} }] }, { text: 'x' }], { stopReason: 'max_turn_requests' }],
      [{}, [{ text: 'cut sho', finish: 'length' }], { stopReason: 'max_tokens' }],
      [{}, [{ text: 'I cannot help with that.', finish: 'refusal' }], { stopReason: 'refusal' }],
    ];
    for (const [flags, responses, want] of cases) {
      const agent = await w.agentWith({ ...flags, model: `scripted:${w.script(responses)}` });
      const res = await recordingClient().app.connectWith(agent.app, async (ctx) => w.prompt(ctx, await w.start(ctx), 'go'));
      expect(res).toEqual(want);
    }
    const failing = await w.agentWith({ model: `scripted:${w.script([{ error: { code: 'BAD_REQUEST', message: 'nope' } }])}` });
    const err = await recordingClient().app.connectWith(failing.app, async (ctx) => w.prompt(ctx, await w.start(ctx), 'go').then(() => undefined, (e: unknown) => e));
    expect(err).toMatchObject({ code: -32603, data: { reason: 'TURN_FAILED', code: 'BAD_REQUEST' } });
  });

  it('docs/acp.md says what the next test shows: MCP servers from the client are mounted, not "not mounted yet" (issue 23 item 7)', () => {
    const doc = readFileSync(join(import.meta.dirname, '..', 'docs', 'acp.md'), 'utf8');
    const said = doc.split('\n').find((l) => /MCP servers the client passes/.test(l)) ?? '';
    expect(said).toMatch(/are mounted: each becomes a row `mcp:<name>`/);
    expect(said).not.toMatch(/did not mount|until then/);
  });

  it('MCP servers from the client are mounted as mcp:<name> rows: one that cannot start is a warning in the log (mcp/server failed), and the session opens', async () => {
    expect(mcpRowsMount()).toBe(true);
    w.problems.length = 0;
    let entries: readonly Entry[] = [];
    const agent = await w.agentWith({ model: `scripted:${w.script([{ text: 'hi' }])}` });
    const res = await recordingClient().app.connectWith(agent.app, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1 });
      const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: w.ws, mcpServers: [{ name: 'files', command: 'bridle-no-such-mcp-server', args: [], env: [] }, { type: 'http', name: 'docs', url: 'http://127.0.0.1:1/mcp', headers: [] }] });
      const r = await w.prompt(ctx, sessionId, 'hello');
      entries = w.logOf(sessionId);
      return r;
    });
    expect(res.stopReason).toBe('end_turn');
    const starts = entries.filter((e): e is EntryOf<'mcp/server'> => e.kind === 'mcp/server');
    expect(starts.map((e) => [e.server, e.outcome]).sort()).toEqual([['mcp:docs', 'failed'], ['mcp:files', 'failed']]);
    expect(w.problems).toEqual([]);
  });

  it('a client that sends an empty cwd gets the --cwd workspace', async () => {
    const product = await composeProduct({ sandbox: 'off', model: `scripted:${w.script([])}` }, { env: { BRIDLE_HOME: w.home } });
    const agent = createAcpAgent({ open: acpOpener(product, () => undefined), info: { name: 'bridle', version: '0' }, defaultCwd: w.ws });
    w.closeAfter(agent);
    const sessionId = await recordingClient().app.connectWith(agent.app, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1 });
      return (await ctx.request(methods.agent.session.new, { cwd: '', mcpServers: [] })).sessionId;
    });
    expect(w.logOf(sessionId)[0]).toMatchObject({ kind: 'session/start', cwd: w.ws });
  });

  it('refuses what it cannot do with named JSON-RPC errors, and goes on serving', async () => {
    const agent = await w.agentWith({ model: `scripted:${w.script([{ text: 'still here' }])}` });
    const { app } = recordingClient();
    const fail = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);
    await app.connectWith(agent.app, async (ctx) => {
      // Before initialize, nothing else is taken.
      expect(await fail(ctx.request(methods.agent.session.new, { cwd: w.ws, mcpServers: [] }))).toMatchObject({ code: -32600 });
      const sessionId = await w.start(ctx);
      expect(await fail(w.prompt(ctx, 'no-such-session', 'x'))).toMatchObject({ code: -32002 });
      expect(await fail(ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'image', data: 'AA==', mimeType: 'image/png' }] }))).toMatchObject({ code: -32602, data: { reason: 'BAD_PROMPT' } });
      expect(await fail(ctx.request(methods.agent.session.load, { sessionId: '../../etc/passwd', cwd: w.ws, mcpServers: [] }))).toMatchObject({ code: -32602, data: { reason: 'BAD_SESSION_ID' } });
      expect(await fail(ctx.request(methods.agent.session.load, { sessionId: 'never-was', cwd: w.ws, mcpServers: [] }))).toMatchObject({ code: -32002, data: { reason: 'NO_SUCH_SESSION' } });
      expect(await fail(ctx.request(methods.agent.session.new, { cwd: 'relative/dir', mcpServers: [] }))).toMatchObject({ code: -32602, data: { reason: 'BAD_CWD' } });
      expect(await fail(ctx.request(methods.agent.session.new, { cwd: join(w.ws, 'missing'), mcpServers: [] }))).toMatchObject({ code: -32602, message: expect.stringContaining('no such directory') });
      const dup = { name: 'x', command: 'true', args: [], env: [] };
      expect(await fail(ctx.request(methods.agent.session.new, { cwd: w.ws, mcpServers: [dup, dup] }))).toMatchObject({ code: -32602, data: { reason: 'BAD_MCP_SERVER' } });
      // Params the schemas refuse, and a method bridle does not have.
      expect(await fail(ctx.request(methods.agent.session.prompt, { sessionId } as never))).toMatchObject({ code: -32602 });
      expect(await fail(ctx.request('session/fly', {}))).toMatchObject({ code: -32601 });
      expect(await w.prompt(ctx, sessionId, 'are you there?')).toEqual({ stopReason: 'end_turn' });
    });
  });
});

/** A client with an editor's buffers (fs) and terminals (real processes), as an editor would offer them. */
