import { describe, expect, it } from 'vitest';
import { presentResult } from './present.js';
import { toolSpec } from './index.js';
import { PLAN_MAX_ENTRIES, updatePlanTool } from './update-plan.js';

const tools = new Map([[updatePlanTool.name, updatePlanTool]]);
const steps = [
  { content: 'read the failing test', status: 'completed' },
  { content: 'fix the parser', status: 'in_progress', priority: 'high' },
  { content: 'run the suite', status: 'pending' },
];

describe('update_plan', () => {
  it('takes the whole plan and answers how far it is, touching nothing (it needs no context)', async () => {
    const args = updatePlanTool.parameters.parse({ entries: steps });
    expect(await updatePlanTool.execute(args, undefined as never)).toEqual({ status: 'ok', content: 'Plan updated: 1 of 3 completed.' });
    expect(updatePlanTool.present(args)).toBe('update_plan (1 of 3 completed)');
    expect(updatePlanTool).toMatchObject({ readOnly: true, idempotent: true });
    expect(updatePlanTool.present(updatePlanTool.parameters.parse({ entries: [] }))).toBe('update_plan (no steps)');
  });

  it('refuses a step without content, an unknown status or priority, an extra key, and too many steps', () => {
    const bad = [
      { entries: [{ content: '', status: 'pending' }] },
      { entries: [{ content: 'x', status: 'done' }] },
      { entries: [{ content: 'x', status: 'pending', priority: 'urgent' }] },
      { entries: [{ content: 'x', status: 'pending', note: 'y' }] },
      { entries: Array.from({ length: PLAN_MAX_ENTRIES + 1 }, () => ({ content: 'x', status: 'pending' })) },
      {},
    ];
    for (const b of bad) expect(updatePlanTool.parameters.safeParse(b).success, JSON.stringify(b).slice(0, 80)).toBe(false);
  });

  it('presents an ok result as a plan intent of the logged arguments, any other as generic', () => {
    const raw = JSON.stringify({ entries: steps });
    expect(presentResult(tools, 'update_plan', raw, { status: 'ok', content: 'Plan updated: 1 of 3 completed.' })).toEqual({ kind: 'plan', entries: steps, title: 'update_plan (1 of 3 completed)', status: 'ok' });
    expect(presentResult(tools, 'update_plan', raw, { status: 'denied', code: 'DENIED', content: 'no' })).toMatchObject({ kind: 'generic', text: 'no' });
  });

  it('tells the model the statuses and priorities in its wire schema', () => {
    const item = (toolSpec(updatePlanTool).parameters as { properties: { entries: { items: { properties: Record<string, { enum?: string[] }>; required: string[] } } } }).properties.entries.items;
    expect(item.properties.status!.enum).toEqual(['pending', 'in_progress', 'completed']);
    expect(item.properties.priority!.enum).toEqual(['high', 'medium', 'low']);
    expect(item.required).toEqual(['content', 'status']);
  });
});
