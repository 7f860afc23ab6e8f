/**
 * Issue 20, item 1: the workflow script runs on the host. Each reproduction
 * of the review, run through the real runner: a script that reaches for a
 * host power gets none (a ReferenceError/TypeError inside the script, so a
 * named workflow error; nothing runs, no file appears outside the
 * workspace, nothing of the environment comes back); its memory, its time
 * and its agents are bounded by the host.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AgentAnswer, AgentCall } from '../../ports/workflow.js';
import { createWorkerRunner, WorkerConfig } from './worker.js';
import { tempDir } from '../../test/helpers/temp.js';

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});
/** A path outside any workspace that a script with host powers would create. */
const marker = () => {
  const d = tempDir('bridle-wf-marker-');
  dirs.push(d);
  return join(d, 'pwned');
};

function run(script: string, over: Partial<WorkerConfig> = {}) {
  const calls: AgentCall[] = [];
  const agent = async (call: AgentCall): Promise<AgentAnswer> => {
    calls.push(call);
    await new Promise((r) => setTimeout(r, 5));
    return { ok: true, value: `report of ${call.prompt}` };
  };
  return createWorkerRunner(WorkerConfig.parse({ deadlineMs: 5_000, ...over }))
    .run({ script, agent, signal: new AbortController().signal })
    .then((outcome) => ({ outcome, calls }));
}

describe('a workflow script has no host powers', () => {
  it("process.getBuiltinModule('child_process') is not there: no command runs, no marker file is written outside the workspace", async () => {
    const m = marker();
    const { outcome } = await run(`process.getBuiltinModule('child_process').execSync('touch ${m}'); return 'ran';`);
    expect(outcome).toMatchObject({ ok: false, category: 'fatal', code: 'WORKFLOW_SCRIPT_ERROR', message: "'process' is not defined" });
    expect(existsSync(m)).toBe(false);
  });

  it("await import('node:child_process') loads nothing: no command runs", async () => {
    const m = marker();
    const { outcome } = await run(`const cp = await import('node:child_process'); cp.execSync('touch ${m}'); return 'ran';`);
    expect(outcome).toMatchObject({ ok: false, code: 'WORKFLOW_SCRIPT_ERROR' });
    expect(existsSync(m)).toBe(false);
  });

  it("process.binding('spawn_sync') is not there: nothing is spawned", async () => {
    const m = marker();
    const { outcome } = await run(
      `const r = process.binding('spawn_sync').spawn({ file: '/bin/sh', args: ['/bin/sh', '-c', 'touch ${m}'], envPairs: [], stdio: [{ type: 'ignore' }, { type: 'ignore' }, { type: 'ignore' }] }); return 'spawned ' + r.status;`,
    );
    expect(outcome).toMatchObject({ ok: false, code: 'WORKFLOW_SCRIPT_ERROR', message: "'process' is not defined" });
    expect(existsSync(m)).toBe(false);
  });

  it('/proc/self/environ cannot be read: no fs, and nothing of the environment reaches the result', async () => {
    // A secret in this process's environment; unstubbed after, since other files share this process (ADR 0104).
    vi.stubEnv('OPENAI_API_KEY', process.env.OPENAI_API_KEY ?? 'sk-fake-isolation-test');
    try {
      const { outcome } = await run(`return process.getBuiltinModule('fs').readFileSync('/proc/self/environ', 'latin1');`);
      expect(outcome).toMatchObject({ ok: false, code: 'WORKFLOW_SCRIPT_ERROR' });
      const text = JSON.stringify(outcome);
      expect(text).not.toContain('PATH=');
      expect(text).not.toContain(process.env.OPENAI_API_KEY!);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('globalThis has no process, require, module loader, fetch or host timers; setTimeout is the one delay-only timer given', async () => {
    const { outcome } = await run(`
      const g = new Function('return this')();
      const names = ['process', 'require', 'module', 'Buffer', 'fetch', 'setInterval', 'setImmediate', 'queueMicrotask', 'WebAssembly', 'console', 'send', 'deliver', 'arm', 'std', 'os'];
      const present = names.filter((n) => typeof g[n] !== 'undefined');
      let imported = 'loaded';
      try { await import('node:fs'); } catch (e) { imported = 'refused'; }
      return { present, imported, timer: typeof setTimeout, agent: typeof agent, parallel: typeof parallel };`);
    expect(outcome).toEqual({ ok: true, value: { present: [], imported: 'refused', timer: 'function', agent: 'function', parallel: 'function' } });
  });
});

describe("a workflow script's bounds", () => {
  it('ArrayBuffers past the memory limit end the script with WORKFLOW_MEMORY_LIMIT, and the process stays up', async () => {
    const { outcome } = await run('const held = []; for (let i = 0; i < 256; i++) held.push(new ArrayBuffer(1 << 20)); return held.length;', { memoryMb: 32 });
    expect(outcome).toMatchObject({ ok: false, category: 'fatal', code: 'WORKFLOW_MEMORY_LIMIT' });
    // Ordinary objects too, and the next script runs as before.
    expect((await run('const a = []; for (;;) a.push({ n: a.length });', { memoryMb: 32 })).outcome).toMatchObject({ ok: false, code: 'WORKFLOW_MEMORY_LIMIT' });
    expect((await run('return 1 + 1;')).outcome).toEqual({ ok: true, value: 2 });
  });

  it('a busy loop that swallows every error still ends at its deadline (WORKFLOW_DEADLINE)', async () => {
    const t0 = Date.now();
    const { outcome } = await run('for (;;) { try { for (;;) {} } catch {} }', { deadlineMs: 300 });
    expect(outcome).toMatchObject({ ok: false, code: 'WORKFLOW_DEADLINE' });
    expect(Date.now() - t0).toBeLessThan(3_000);
  });

  it('unbounded recursion is a named script error (stack overflow), not a crashed worker', async () => {
    const { outcome } = await run('function f(n) { return f(n + 1) + 1; } return f(0);');
    expect(outcome).toMatchObject({ ok: false, code: 'WORKFLOW_SCRIPT_ERROR' });
  });

  it("raw agent messages posted past the script's own counter cannot exceed maxAgents", async () => {
    const { outcome, calls } = await run(
      `const { parentPort } = process.getBuiltinModule('worker_threads');
       for (let i = 0; i < 10; i++) parentPort.postMessage({ type: 'agent', id: 100 + i, prompt: 'raw ' + i, options: {} });
       await new Promise((r) => setTimeout(r, 200));
       return 'posted';`,
      { maxAgents: 2 },
    );
    expect(outcome.ok).toBe(false);
    expect(calls.length).toBeLessThanOrEqual(2);
  });

  it('the delay-only setTimeout fires in order, can be cleared, and cannot outlive the deadline', async () => {
    const { outcome } = await run(`
      const seen = [];
      await new Promise((r) => { setTimeout(() => seen.push('b'), 20); const x = setTimeout(() => seen.push('never'), 5); clearTimeout(x); setTimeout(() => seen.push('a'), 1); setTimeout(r, 40); });
      return seen;`);
    expect(outcome).toEqual({ ok: true, value: ['a', 'b'] });
    expect((await run('await new Promise((r) => setTimeout(r, 60_000)); return 1;', { deadlineMs: 300 })).outcome).toMatchObject({ ok: false, code: 'WORKFLOW_DEADLINE' });
  });
});
