/**
 * Plan entries over ACP (ADR 0076): with the `tool:update_plan` row, a model's `update_plan` call is logged like
 * any call and the client gets, after its `tool_call_update`, a `session/update` of kind `plan` with every step;
 * `session/load` sends the same from the log. Without the row the model is not offered the tool.
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
