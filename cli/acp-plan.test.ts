/**
 * Plan entries over ACP (ADR 0076): with the `tool:update_plan` row, a model's `update_plan` call is logged like
 * any call and the client gets, after its `tool_call_update`, a `session/update` of kind `plan` with every step;
 * `session/load` sends the same from the log, in its place, and `session/resume` the plan now (with the meter),
 * both before they answer. Without the row the model is not offered the tool.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { methods } from '@agentclientprotocol/sdk';
import { describe, expect, it } from 'vitest';
import { verifyLog } from '../log/verify.js';
import { replayThroughMachines } from '../replay/replay.js';
import { toolsOfLog } from '../replay/setup.js';
import { builtinTools } from '../tools/index.js';
import { recordingClient, updatesOf } from '../test/helpers/acp.js';
import { useAcpWorld } from '../test/helpers/acp-world.js';
import { createAcpAgent } from '../server/acp/agent.js';
import { acpAgentOptions } from './acp.js';
import { composeProduct } from './settings.js';

const w = useAcpWorld();
const steps = [
  { content: 'read the failing test', status: 'completed' },
  { content: 'fix the parser', status: 'in_progress', priority: 'high' },
];

function planPatch(): string {
  const file = join(w.root, 'plan.yaml');
  writeFileSync(file, "patch:\n  - { id: 'tool:update_plan', use: update_plan, insert: true, after: 'tool:bash' }\n");
  return file;
}

/** An agent whose cost figures take a while (a tree of subagent logs to read, say): the answer must wait for them. */
async function slowUsageAgent(model: string) {
  const product = await composeProduct({ sandbox: 'off', approval: 'never', model, patch: planPatch() }, { env: { BRIDLE_HOME: w.home } });
  const o = acpAgentOptions(product, (m) => w.problems.push(m), {});
  const usage = o.usage!;
  return w.closeAfter(
    createAcpAgent({ ...o, info: { name: 'bridle', version: '0' }, usage: async (id, entries) => (await new Promise((r) => setTimeout(r, 100)), usage(id, entries)) }),
  );
}

describe('bridle acp: plan entries', () => {
  it('an update_plan call sends a plan update with every step, live and again from the log on session/load; the log replays', async () => {
    const file = w.script([{ toolCalls: [{ name: 'update_plan', arguments: { entries: steps } }] }, { text: 'On it.' }]);
    const agent = await w.agentWith({ approval: 'never', model: `scripted:${file}`, patch: planPatch() });
    const live = recordingClient();
    const sessionId = await live.app.connectWith(agent.app, async (ctx) => {
      const id = await w.start(ctx);
      await w.prompt(ctx, id, 'fix it');
      return id;
    });
    await agent.close();
    const plan = { sessionUpdate: 'plan', entries: [{ content: 'read the failing test', status: 'completed', priority: 'medium' }, { content: 'fix the parser', status: 'in_progress', priority: 'high' }] };
    expect(updatesOf(live.record, 'plan')).toEqual([plan]);
    const kinds = live.record.updates.map((n) => n.update.sessionUpdate);
    expect(kinds.indexOf('plan')).toBe(kinds.lastIndexOf('tool_call_update') + 1);
    expect(updatesOf(live.record, 'tool_call')[0]).toMatchObject({ title: 'update_plan (1 of 2 completed)', kind: 'think' });

    const again = await w.agentWith({ approval: 'never', model: `scripted:${w.script([])}`, patch: planPatch() });
    const loaded = recordingClient();
    await loaded.app.connectWith(again.app, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      await ctx.request(methods.agent.session.load, { sessionId, cwd: w.ws, mcpServers: [] });
    });
    expect(updatesOf(loaded.record, 'plan')).toEqual([plan]);

    const log = w.logOf(sessionId);
    expect(log.find((e) => e.kind === 'tool/result')).toMatchObject({ status: 'ok', content: 'Plan updated: 1 of 2 completed.' });
    expect(verifyLog(log).violations).toEqual([]);
    expect((await replayThroughMachines(log, toolsOfLog(log, builtinTools()))).identical).toBe(true);
  });

  it('session/resume sends the current plan and the usage meter before it answers; session/load has the plan in its place and the meter after the history', async () => {
    const later = [{ content: 'read the failing test', status: 'completed' }, { content: 'fix the parser', status: 'completed' }];
    const file = w.script([
      { toolCalls: [{ name: 'update_plan', arguments: { entries: steps } }], usage: { inputTokens: 100, outputTokens: 10 } },
      { toolCalls: [{ name: 'update_plan', arguments: { entries: later } }], usage: { inputTokens: 200, outputTokens: 20 } },
      { text: 'Done.', usage: { inputTokens: 300, outputTokens: 5 } },
    ]);
    const agent = await w.agentWith({ approval: 'never', model: `scripted:${file}`, patch: planPatch() });
    const sessionId = await recordingClient().app.connectWith(agent.app, async (ctx) => {
      const id = await w.start(ctx);
      await w.prompt(ctx, id, 'fix it');
      return id;
    });
    await agent.close();
    const current = { sessionUpdate: 'plan', entries: later.map((e) => ({ ...e, priority: 'medium' })) };

    // Resume: none of the history, but what the client shows beside it — the plan now and the meter — before the answer.
    const resumer = await slowUsageAgent(`scripted:${w.script([])}`);
    const resumed = recordingClient();
    const atAnswer = await resumed.app.connectWith(resumer.app, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      await ctx.request(methods.agent.session.resume, { sessionId, cwd: w.ws });
      return resumed.record.updates.map((n) => n.update);
    });
    await resumer.close();
    expect(atAnswer.map((u) => u.sessionUpdate)).toEqual(['plan', 'usage_update']);
    expect(atAnswer[0]).toEqual(current);
    expect(atAnswer[1]).toMatchObject({ sessionUpdate: 'usage_update', used: 305, cost: { amount: 0, currency: 'USD' } });

    // Load: each plan where its result is in the history, the last one the plan now; the meter once the history is out, before the answer.
    const loader = await slowUsageAgent(`scripted:${w.script([])}`);
    const loaded = recordingClient();
    const kinds = await loaded.app.connectWith(loader.app, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      await ctx.request(methods.agent.session.load, { sessionId, cwd: w.ws, mcpServers: [] });
      return loaded.record.updates.map((n) => n.update.sessionUpdate);
    });
    const plans = updatesOf(loaded.record, 'plan');
    expect(plans).toHaveLength(2);
    expect(plans[1]).toEqual(current);
    const results = kinds.flatMap((k, i) => (k === 'tool_call_update' && kinds[i + 1] === 'plan' ? [i] : []));
    expect(results).toHaveLength(2);
    expect(kinds.at(-1)).toBe('usage_update');
    expect(updatesOf(loaded.record, 'usage_update')).toEqual([atAnswer[1]]);
  });

  it('is not offered without its row: base leaves it out', async () => {
    const agent = await w.agentWith({ approval: 'never', model: `scripted:${w.script([{ text: 'ok' }])}` });
    const sessionId = await recordingClient().app.connectWith(agent.app, async (ctx) => {
      const id = await w.start(ctx);
      await w.prompt(ctx, id, 'hi');
      return id;
    });
    const header = w.logOf(sessionId).find((e) => e.kind === 'request/header');
    expect(header?.kind === 'request/header' && header.tools.map((t) => t.name)).not.toContain('update_plan');
    expect(header?.kind === 'request/header' && header.tools.map((t) => t.name)).toContain('read_file');
  });
});
