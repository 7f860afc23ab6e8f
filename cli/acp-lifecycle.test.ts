/**
 * ACP's 2026 session methods on `bridle acp`, in process, through the
 * official SDK's client (ADR 0063): `session/list`, `session/resume`,
 * `session/close`, `session/delete` (never of a log another writer holds),
 * `$/cancel_request` of a prompt, `session/set_config_option` (approval
 * within the session's policy, the model), and a disconnect mid-turn whose
 * log ends with the turn's closing entries, then `session/end`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { client, methods, RequestError } from '@agentclientprotocol/sdk';
import { describe, expect, it } from 'vitest';
import { verifyLog } from '../log/verify.js';
import { acquireJsonlLock } from '../adapters/store/jsonl-lock.js';
import { MODEL } from '../ports/index.js';
import { recordingClient, streamedText, until, updatesOf } from '../test/helpers/acp.js';
import { useAcpWorld, writeCall } from '../test/helpers/acp-world.js';

const w = useAcpWorld();
const refusal = (p: Promise<unknown>) => p.then(() => undefined, (err: unknown) => err as RequestError);

describe('bridle acp: the session methods of ACP 2026', () => {
  it('initialize advertises list, resume, close and delete; session/new answers its config options', async () => {
    const agent = await w.agentWith({ model: `scripted:${w.script([])}` });
    const { app } = recordingClient();
    const { init, created } = await app.connectWith(agent.app, async (ctx) => {
      const init = await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      return { init, created: await ctx.request(methods.agent.session.new, { cwd: w.ws, mcpServers: [] }) };
    });
    expect(init.agentCapabilities?.sessionCapabilities).toEqual({ list: {}, resume: {}, close: {}, delete: {} });
    expect(created.configOptions?.map((o) => [o.id, o.type, o.category, o.currentValue])).toEqual([
      ['approval', 'select', 'mode', 'ask'],
      ['model', 'select', 'model', expect.stringMatching(/^scripted:/)],
    ]);
    // Under --approval ask, auto is not offered.
    expect((created.configOptions![0] as { options: { value: string }[] }).options.map((o) => o.value)).toEqual(['never', 'ask']);
  });

  it('session/list gives the store\'s sessions with cwd, updatedAt and title, filtered by cwd; session/resume attaches without replaying history; session/close ends it', async () => {
    const agent = await w.agentWith({ model: `scripted:${w.script([{ text: 'One.' }, { text: 'Two.' }])}` });
    const { app, record } = recordingClient();
    const out = await app.connectWith(agent.app, async (ctx) => {
      const sessionId = await w.start(ctx);
      await w.prompt(ctx, sessionId, 'fix the failing test\nplease');
      const listed = await ctx.request(methods.agent.session.list, {});
      const elsewhere = await ctx.request(methods.agent.session.list, { cwd: '/nowhere' });
      await ctx.request(methods.agent.session.close, { sessionId });
      const closedLog = w.logOf(sessionId);
      const before = record.updates.length;
      const resumed = await ctx.request(methods.agent.session.resume, { sessionId, cwd: w.ws });
      const replayed = record.updates.slice(before);
      const res = await w.prompt(ctx, sessionId, 'again');
      return { sessionId, listed, elsewhere, closedLog, resumed, replayed, res };
    });
    const last = out.closedLog.filter((e) => e.kind !== 'session/end').at(-1)!;
    expect(out.listed.sessions).toEqual([{ sessionId: out.sessionId, cwd: w.ws, title: 'fix the failing test', updatedAt: expect.any(String) }]);
    expect(Date.parse(out.listed.sessions[0]!.updatedAt!)).toBeGreaterThanOrEqual(Date.parse(last.at));
    expect(out.elsewhere.sessions).toEqual([]);
    expect(out.closedLog.at(-1)).toMatchObject({ kind: 'session/end' });
    expect(out.resumed.configOptions).toHaveLength(2);
    // Nothing of the log went to the client: it keeps its own history.
    expect(out.replayed.filter((n) => n.update.sessionUpdate !== 'usage_update')).toEqual([]);
    expect(out.res.stopReason).toBe('end_turn');
    // The reopened session's scripted model begins its script anew.
    expect(streamedText(record)).toBe('One.One.');
    expect(verifyLog(w.logOf(out.sessionId)).violations).toEqual([]);
  });

  it('session/delete removes the log through the store, refuses SESSION_LOCKED while another process holds it, and is idempotent', async () => {
    const agent = await w.agentWith({ model: `scripted:${w.script([{ text: 'a' }, { text: 'b' }])}` });
    const { app } = recordingClient();
    const out = await app.connectWith(agent.app, async (ctx) => {
      const mine = await w.start(ctx);
      await w.prompt(ctx, mine, 'mine');
      const theirs = (await ctx.request(methods.agent.session.new, { cwd: w.ws, mcpServers: [] })).sessionId;
      await ctx.request(methods.agent.session.close, { sessionId: theirs });
      // Another process takes the claim on it (as `bridle run --session` would).
      const held = acquireJsonlLock(join(w.home, 'sessions', `${theirs}.jsonl`));
      const locked = await refusal(ctx.request(methods.agent.session.delete, { sessionId: theirs }));
      held.release();
      await ctx.request(methods.agent.session.delete, { sessionId: mine });
      const again = await ctx.request(methods.agent.session.delete, { sessionId: mine });
      const listed = await ctx.request(methods.agent.session.list, {});
      return { mine, theirs, locked, again, listed };
    });
    expect(out.locked).toBeInstanceOf(RequestError);
    expect(out.locked).toMatchObject({ code: -32003, data: { reason: 'SESSION_LOCKED' } });
    expect(out.locked!.message).toContain(`pid ${process.pid}`);
    expect(existsSync(join(w.home, 'sessions', `${out.theirs}.jsonl`))).toBe(true);
    expect(existsSync(join(w.home, 'sessions', `${out.mine}.jsonl`))).toBe(false);
    expect(out.again).toEqual({});
    expect(out.listed.sessions.map((s) => s.sessionId)).toEqual([out.theirs]);
  });

  it('$/cancel_request of a running prompt cancels the turn: the prompt answers cancelled, bash is ABORTED', async () => {
    const agent = await w.agentWith({ model: `scripted:${w.script([{ toolCalls: [{ name: 'bash', arguments: { command: 'sleep 30' } }] }])}`, approval: 'auto' });
    const { app, record } = recordingClient();
    const { sessionId, res } = await app.connectWith(agent.app, async (ctx) => {
      const sessionId = await w.start(ctx);
      const abort = new AbortController();
      const running = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'go' }] }, { cancellationSignal: abort.signal });
      await until(() => updatesOf(record, 'tool_call_update').some((u) => u.status === 'in_progress'), 10_000, 'bash to start');
      // The SDK's client sends `$/cancel_request` for a request whose signal aborts.
      abort.abort();
      return { sessionId, res: await running.then((r) => r, (err: unknown) => err) };
    });
    await until(() => w.logOf(sessionId).some((e) => e.kind === 'turn/end'), 10_000, 'the turn to end');
    const log = w.logOf(sessionId);
    expect(res instanceof RequestError ? res.code : res).toEqual(expect.anything());
    expect(log.find((e) => e.kind === 'session/cancel')).toMatchObject({ by: 'acp' });
    expect(log.find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'aborted' });
    expect(log.find((e) => e.kind === 'tool/result')).toMatchObject({ code: 'ABORTED' });
  });

  it('session/set_config_option: approval narrowed to never runs a confined write unasked, back to ask asks again; auto beyond the policy is refused POLICY_WIDENED; the log verifies', async () => {
    const agent = await w.agentWith({ model: `scripted:${w.script([{ toolCalls: [writeCall('a.txt', 'a')] }, { text: 'wrote a.' }])}` });
    const { app, record } = recordingClient();
    const out = await app.connectWith(agent.app, async (ctx) => {
      const sessionId = await w.start(ctx);
      const never = await ctx.request(methods.agent.session.setConfigOption, { sessionId, configId: 'approval', value: 'never' });
      await w.prompt(ctx, sessionId, 'write a');
      const asked = record.permissions.length;
      const widened = await refusal(ctx.request(methods.agent.session.setConfigOption, { sessionId, configId: 'approval', value: 'auto' }));
      const unknown = await refusal(ctx.request(methods.agent.session.setConfigOption, { sessionId, configId: 'model', value: 'no-such-model' }));
      await ctx.request(methods.agent.session.setConfigOption, { sessionId, configId: 'approval', value: 'ask' });
      // Opened again, the scripted model begins its script anew: the same write, asked this time.
      await w.prompt(ctx, sessionId, 'write a again');
      return { sessionId, never, asked, widened, unknown };
    });
    expect(out.never.configOptions[0]).toMatchObject({ id: 'approval', currentValue: 'never' });
    expect(out.asked).toBe(0);
    expect(existsSync(join(w.ws, 'a.txt'))).toBe(true);
    expect(out.widened).toMatchObject({ code: -32602, data: { reason: 'POLICY_WIDENED' } });
    expect(out.unknown).toMatchObject({ code: -32602, data: { reason: 'BAD_CONFIG_VALUE' } });
    expect(record.permissions).toHaveLength(1);
    expect(record.permissions[0]!.toolCall).toMatchObject({ kind: 'edit' });
    const log = w.logOf(out.sessionId);
    expect(log.filter((e) => e.kind === 'session/policy').map((e) => [e.from.approval, e.to.approval])).toEqual([['ask', 'never'], ['never', 'ask']]);
    expect(verifyLog(log).violations).toEqual([]);
  });

  it('session/set_config_option model: the catalogue\'s ids for the row\'s wire are offered, and the session runs on the one set', async () => {
    const agent = await w.agentWith({ model: 'qwen2.5-coder', baseUrl: 'http://127.0.0.1:9/v1' });
    const { app } = recordingClient();
    const out = await app.connectWith(agent.app, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      const created = await ctx.request(methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
      const set = await ctx.request(methods.agent.session.setConfigOption, { sessionId: created.sessionId, configId: 'model', value: 'gpt-4o-mini' });
      return { created, set, running: agent.sessions.get(created.sessionId)!.session.host.get(MODEL).name };
    });
    const model = out.created.configOptions![1] as { currentValue: string; options: { value: string }[] };
    expect(model.currentValue).toBe('qwen2.5-coder');
    expect(model.options.map((o) => o.value)).toContain('gpt-4o-mini');
    expect(model.options.map((o) => o.value)).not.toContain('claude-sonnet-4-5');
    expect(out.set.configOptions[1]).toMatchObject({ currentValue: 'gpt-4o-mini' });
    expect(out.running).toContain('gpt-4o-mini');
  });

  it('a client gone mid-turn: the log ends with the aborted turn\'s closing entries, then session/end', async () => {
    const agent = w.closeAfter(await w.agentWith({ model: `scripted:${w.script([{ toolCalls: [{ name: 'bash', arguments: { command: 'sleep 30' } }] }])}`, approval: 'auto' }));
    const { record } = recordingClient();
    const app = client({ name: 'gone' }).onNotification(methods.client.session.update, ({ params }) => void record.updates.push(params));
    // The client's half of the wire, which the test cuts: the agent reads from `toAgent`, ended by `kill`.
    const pair = new TransformStream();
    const back = new TransformStream();
    const reader = pair.readable.getReader();
    let kill = () => undefined as void;
    const toAgent = new ReadableStream({
      start: (ctrl) => void (kill = () => ctrl.close()),
      pull: async (ctrl) => {
        const r = await reader.read();
        if (r.done) ctrl.close();
        else ctrl.enqueue(r.value);
      },
    });
    agent.app.connect({ readable: toAgent, writable: back.writable });
    const c = app.connect({ readable: back.readable, writable: pair.writable });
    await c.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await c.agent.request(methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
    void c.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'go' }] }).catch(() => undefined);
    await until(() => updatesOf(record, 'tool_call_update').some((u) => u.status === 'in_progress'), 10_000, 'bash to start');
    kill();
    await agent.closed;
    c.close();
    const kinds = w.logOf(sessionId).map((e) => e.kind);
    // Before this fix `session/end` came first and the turn's end after it (`bridle sessions` said idle).
    expect(kinds.filter((k) => k === 'session/end')).toHaveLength(1);
    expect(kinds.at(-1)).toBe('session/end');
    expect(kinds.lastIndexOf('turn/end')).toBeGreaterThan(kinds.lastIndexOf('tool/result'));
    expect(kinds.slice(kinds.lastIndexOf('turn/end') + 1)).toEqual(expect.arrayContaining(['session/end']));
    expect(kinds.slice(kinds.lastIndexOf('turn/end') + 1).every((k) => k === 'checkpoint' || k === 'session/end')).toBe(true);
    expect(w.logOf(sessionId).find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'aborted' });
    expect(verifyLog(w.logOf(sessionId)).violations).toEqual([]);
  });
});
