import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOffSandbox } from '../adapters/sandbox/off.js';
import { createLocalSubprocess } from '../adapters/subprocess/local.js';
import { createMemorySubprocess } from '../adapters/subprocess/memory.js';
import { createTempWorkspace, type TempWorkspace } from '../adapters/fs/testing.js';
import type { Launch, Launcher } from '../safety/sandbox.js';
import { BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_OUTPUT_BYTES, bashTool, formatCommandResult, type BashArgs } from './bash.js';
import type { SubprocessResult } from '../ports/subprocess.js';

/** The local subprocess, unconfined (as asked: a throwaway workspace), over `launcher` when given. */
const local = (workspace: string, launcher?: Launcher) =>
  createLocalSubprocess({ sandbox: createOffSandbox(), policy: { mode: 'full', workspace, network: true }, ...(launcher ? { launcher } : {}) });

let t: TempWorkspace;
beforeEach(() => {
  t = createTempWorkspace({ subprocess: (ws) => local(ws) });
});
afterEach(() => t.cleanup());

const run = (args: BashArgs, ctx = t.ctx) => bashTool.execute(bashTool.parameters.parse(args), ctx);

function fakeLauncher(result: Partial<SubprocessResult>, seen: Launch[] = []): Launcher {
  return async (launch) => {
    seen.push(launch);
    return { exitCode: 0, signal: null, stdout: '', stderr: '', timedOut: false, truncatedBytes: 0, ...result };
  };
}

describe('bash (local subprocess)', () => {
  it('runs in the workspace and shows exit code and output', async () => {
    expect(await run({ command: 'pwd; echo warn >&2' })).toEqual({
      status: 'ok',
      content: `exit code: 0\n--- stdout ---\n${t.workspace}\n--- stderr ---\nwarn`,
    });
  });

  it('marks a non-zero exit as EXIT_NONZERO but keeps the output', async () => {
    expect(await run({ command: 'echo partial; echo boom >&2; exit 2' })).toEqual({
      status: 'error',
      code: 'EXIT_NONZERO',
      content: 'exit code: 2\n--- stdout ---\npartial\n--- stderr ---\nboom',
    });
  });

  it('kills a command past timeout_ms with TOOL_TIMEOUT', async () => {
    const started = Date.now();
    const out = await run({ command: 'echo begun; sleep 30', timeout_ms: 300 });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(out.status).toBe('error');
    expect(out.code).toBe('TOOL_TIMEOUT');
    expect(out.content).toContain('timed out after 300 ms');
    expect(out.content).toContain('begun');
  });

  it('caps output, saying how many bytes were cut', async () => {
    const out = await run({ command: `head -c ${BASH_MAX_OUTPUT_BYTES + 5000} /dev/zero | tr '\\0' a` });
    expect(out.status).toBe('ok');
    expect(out.content).toContain('[... 5000 bytes cut ...]');
    expect(out.content).toMatch(/\[output capped at 64\.0 KiB: 5000 bytes cut from the middle\]$/);
  });

  it('reports ABORTED when the call is cancelled', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const out = await run({ command: 'sleep 30' }, { ...t.ctx, signal: controller.signal });
    expect(out).toMatchObject({ status: 'error', code: 'ABORTED' });
  });
});

describe('bash (fake launcher)', () => {
  it('asks the seam for bash -c; the provider resolves the workspace, the default timeout and cap', async () => {
    const seen: Launch[] = [];
    await run({ command: 'ls' }, { ...t.ctx, subprocess: local(t.workspace, fakeLauncher({}, seen)) });
    expect(seen[0]).toMatchObject({
      argv: ['bash', '-c', 'ls'],
      cwd: t.workspace,
      timeoutMs: BASH_DEFAULT_TIMEOUT_MS,
      maxOutputBytes: BASH_MAX_OUTPUT_BYTES,
    });
  });

  it('turns a subprocess that cannot start into SPAWN_FAILED', async () => {
    const broken: Launcher = () => Promise.reject(new Error('bubblewrap is not installed'));
    const out = await run({ command: 'ls' }, { ...t.ctx, subprocess: local(t.workspace, broken) });
    expect(out).toMatchObject({ status: 'error', code: 'SPAWN_FAILED' });
    expect(out.content).toContain('bubblewrap is not installed');
  });

  it('passes a refusal through with its own code: no subprocess is SUBPROCESS_UNAVAILABLE', async () => {
    const out = await run({ command: 'ls' }, { ...t.ctx, subprocess: createMemorySubprocess() });
    expect(out).toMatchObject({ status: 'error', code: 'SUBPROCESS_UNAVAILABLE' });
    expect(out.content).toContain('"ls" did not run');
  });

  it('formats signals and empty output', () => {
    expect(formatCommandResult({ exitCode: null, signal: 'SIGKILL', stdout: '', stderr: '', timedOut: false, truncatedBytes: 0 })).toBe(
      'exit code: none (killed by SIGKILL)\n(no output)',
    );
  });

  it('validates timeout_ms and presents commands in one line', () => {
    expect(bashTool.parameters.safeParse({ command: 'x', timeout_ms: 600_001 }).success).toBe(false);
    expect(bashTool.parameters.safeParse({ command: '' }).success).toBe(false);
    expect(bashTool.present({ command: 'npm test\nnpm run lint' })).toBe('bash: npm test (+1 lines)');
    expect(bashTool.readOnly || bashTool.idempotent).toBe(false);
  });
});
