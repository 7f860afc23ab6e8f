import { describe, expect, it } from 'vitest';
import type { AgentAnswer, AgentCall } from '../../ports/workflow.js';
import { createAgentGate } from './agent-gate.js';

/** Runs each call until the test releases it; records what was answered. */
function harness(limits: { maxAgents: number; concurrency: number }) {
  const started: string[] = [];
  const release: (() => void)[] = [];
  const answers: [number, AgentAnswer][] = [];
  const run = (call: AgentCall) =>
    new Promise<AgentAnswer>((resolve) => {
      started.push(call.prompt);
      release.push(() => resolve({ ok: true, value: call.prompt }));
    });
  const gate = createAgentGate(limits, run, (id, a) => answers.push([id, a]));
  const tick = () => new Promise((r) => setTimeout(r, 0));
  return { gate, started, release, answers, tick };
}

describe("the host's own count of agent requests", () => {
  it('raw agent messages past maxAgents are answered WORKFLOW_TOO_MANY_AGENTS and never run, whatever ids they carry', async () => {
    const h = harness({ maxAgents: 2, concurrency: 8 });
    for (let i = 0; i < 10; i++) h.gate.request({ type: 'agent', id: 100 + i, prompt: `raw ${i}`, options: {} });
    expect(h.started).toEqual(['raw 0', 'raw 1']);
    expect(h.answers).toHaveLength(8);
    expect(h.answers.every(([, a]) => !a.ok && a.category === 'fatal' && a.code === 'WORKFLOW_TOO_MANY_AGENTS')).toBe(true);
    h.release.forEach((r) => r());
    await h.tick();
    expect(h.answers.filter(([, a]) => a.ok).map(([id]) => id)).toEqual([100, 101]);
  });

  it('runs at most concurrency at once; a malformed request is a bad call; after stop nothing starts or is answered', async () => {
    const h = harness({ maxAgents: 10, concurrency: 1 });
    h.gate.request({ type: 'agent', id: 1, prompt: 'a', options: {} });
    h.gate.request({ type: 'agent', id: 2, prompt: 'b' });
    h.gate.request({ type: 'agent', id: 3, prompt: 'c', options: { provider: 'spawn', tools: ['read_file'], shell: true } });
    expect(h.started).toEqual(['a']);
    expect(h.answers).toEqual([[3, { ok: false, category: 'fatal', code: 'WORKFLOW_BAD_CALL', message: 'agent(prompt, options): the call was malformed' }]]);
    h.release[0]!();
    await h.tick();
    expect(h.started).toEqual(['a', 'b']);
    h.gate.stop();
    h.gate.request({ type: 'agent', id: 4, prompt: 'd', options: {} });
    h.release[1]!();
    await h.tick();
    expect(h.started).toEqual(['a', 'b']);
    expect(h.answers.map(([id]) => id)).toEqual([3, 1]);
  });
});
