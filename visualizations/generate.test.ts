import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sessionMachine } from '../machines/session.machine.js';
import { stepMachine } from '../machines/step.machine.js';
import { toolCallMachine } from '../machines/tool-call.machine.js';
import { toDot } from './dot.js';
import { visualizationsDir } from './paths.js';
import { discoverMachines } from './machines.js';
import { toMermaid } from './mermaid.js';
import { renderAll } from './render.js';
import { activeIds, allStates, toChart } from './statechart.js';

describe('the checked-in diagrams', () => {
  it('are fresh: regenerating every machine gives exactly the files in visualizations/ (run `npm run viz`)', async () => {
    const dir = visualizationsDir();
    const files = await renderAll();
    const stale = files.filter((f) => {
      try {
        return readFileSync(join(dir, f.path), 'utf8') !== f.content;
      } catch {
        return true;
      }
    });
    expect(stale.map((f) => f.path), 'stale or missing diagrams: run `npm run viz`').toEqual([]);
    // No diagram of a machine that no longer exists.
    const expected = new Set(files.map((f) => f.path));
    const orphans = readdirSync(dir).filter((f) => /\.(mmd|svg)$/.test(f) && !expected.has(f));
    expect(orphans, 'diagrams without a machine: delete them').toEqual([]);
  });

  it('covers every machine file, the core four first', async () => {
    const names = (await discoverMachines()).map((m) => m.name);
    expect(names.slice(0, 4)).toEqual(['session', 'turn', 'step', 'tool-call']);
    const files = readdirSync(new URL('../machines/', import.meta.url)).filter((f) => f.endsWith('.machine.ts'));
    expect(names.length).toBe(files.length);
  });
});

describe('machine → chart → diagram', () => {
  const chart = toChart(sessionMachine);

  it('walks every state, with descriptions, invokes and readable labels', () => {
    const ids = allStates(chart).map((s) => s.id);
    expect(ids).toEqual(expect.arrayContaining(['session.idle', 'session.running', 'session.running.active', 'session.running.cancelling', 'session.closed']));
    const running = allStates(chart).find((s) => s.id === 'session.running')!;
    expect(running).toMatchObject({ type: 'compound', initial: 'session.running.active', invokes: ['turn'] });
    expect(allStates(chart).find((s) => s.id === 'session.idle')!.description).toMatch(/No turn runs/);
    const labels = chart.edges.map((e) => `${e.source} -> ${e.target}: ${e.label}`);
    expect(labels).toContain('session.running -> session.idle: done turn');
    expect(labels).toContain('session.idle -> session.running: session.wake.requested [hasFollowup]');
    expect(labels).toContain('session.running.active -> session.running.active: session.input.received [isSteer]');
  });

  it('shows the synchronous phases the host runs as entry actions, as it shows invoked actors', () => {
    const preparing = allStates(toChart(stepMachine)).find((s) => s.id === 'step.preparing')!;
    expect(preparing).toMatchObject({ runs: ['prepareRequest'], invokes: [] });
    expect(allStates(toChart(toolCallMachine)).find((s) => s.id === 'tool-call.validating')!.runs).toEqual(['validateCall']);
    expect(allStates(chart).every((s) => !s.runs.includes('record'))).toBe(true);
    expect(toMermaid(toChart(stepMachine))).toContain('    runs prepareRequest\n');
  });

  it('writes Mermaid stateDiagram-v2 with nested states and notes', () => {
    const mmd = toMermaid(chart, 'machines/session.machine.ts');
    expect(mmd.startsWith('stateDiagram-v2\n')).toBe(true);
    expect(mmd).toContain('  state running {\n');
    expect(mmd).toContain('    [*] --> active\n');
    expect(mmd).toContain('  [*] --> idle\n');
    expect(mmd).toContain('  running --> idle : done turn\n');
    expect(mmd).toContain('  note right of idle\n');
    expect(mmd).toContain('  closed --> [*]\n');
    expect(mmd).not.toMatch(/[;#]/);
  });

  it('writes DOT whose SVG groups are addressable by state id', () => {
    const dot = toDot(chart);
    expect(dot).toContain('subgraph "cluster_session.running"');
    expect(dot).toContain('id="state:session.running.active"');
    expect(dot).toContain('lhead="cluster_session.running"');
  });

  it('maps a state value to the active state ids', () => {
    expect(activeIds('session', 'idle')).toEqual(['session.idle']);
    expect(activeIds('session', { running: 'active' })).toEqual(['session.running', 'session.running.active']);
  });
});
