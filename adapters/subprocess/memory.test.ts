import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../fs/memory.js';
import { SUBPROCESS_UNAVAILABLE } from '../../ports/subprocess.js';
import type { ToolContext } from '../../ports/tools.js';
import { bashTool } from '../../tools/bash.js';
import { createMemorySubprocess, MemorySubprocessConfig, type MemorySubprocessOptions } from './memory.js';

const bash = (options: MemorySubprocessOptions | undefined, command: string, signal = new AbortController().signal) => {
  const ctx: ToolContext = { fs: createMemoryFs(), subprocess: createMemorySubprocess(options), signal };
  return bashTool.execute({ command }, ctx);
};

describe('the memory subprocess', () => {
  it('without scripts refuses every command with SUBPROCESS_UNAVAILABLE, and runs nothing', async () => {
    const sub = createMemorySubprocess();
    await expect(sub.run(sub.resolve({ argv: ['bash', '-c', 'rm -rf /'] }), new AbortController().signal)).rejects.toMatchObject({
      code: SUBPROCESS_UNAVAILABLE,
      message: 'No subprocess is available: "rm -rf /" did not run (this session runs no commands).',
    });
    expect(await bash(undefined, 'ls')).toEqual({
      status: 'error',
      code: 'SUBPROCESS_UNAVAILABLE',
      content: 'No subprocess is available: "ls" did not run (this session runs no commands).',
    });
  });

  it('answers scripted commands, first match wins, as the bash tool words any command', async () => {
    const scripts = {
      scripts: [
        { match: '^npm test', stdout: '2 passing\n', stderr: '1 failing\n', exitCode: 1 },
        { match: /^git status$/, stdout: 'clean\n' },
        { match: 'npm', stdout: 'any npm\n' },
      ],
    };
    expect(await bash(scripts, 'npm test -- --run')).toEqual({
      status: 'error',
      code: 'EXIT_NONZERO',
      content: 'exit code: 1\n--- stdout ---\n2 passing\n--- stderr ---\n1 failing',
    });
    expect(await bash(scripts, 'git status')).toEqual({ status: 'ok', content: 'exit code: 0\n--- stdout ---\nclean' });
    expect((await bash(scripts, 'npm ci')).content).toBe('exit code: 0\n--- stdout ---\nany npm');
    expect(await bash(scripts, 'make')).toMatchObject({ code: 'SUBPROCESS_UNAVAILABLE', content: 'No subprocess is available: "make" did not run (no scripted answer matches it).' });
  });

  it('matches an argv that is not `sh -c` by its words, caps output by the spec, and stays pure in resolve', async () => {
    const sub = createMemorySubprocess({ scripts: [{ match: '^ls -la$', stdout: 'x'.repeat(100) }], maxOutputBytes: 10 });
    const spec = sub.resolve({ argv: ['ls', '-la'], env: { HOME: '/h', AWS_SECRET_ACCESS_KEY: 's' } });
    expect(spec).toEqual({ argv: ['ls', '-la'], cwd: '/workspace', timeoutMs: 120_000, maxOutputBytes: 10, env: { HOME: '/h' }, sandbox: { by: 'memory', mode: 'read-only', network: false } });
    const out = await sub.run(spec, new AbortController().signal);
    expect(out).toMatchObject({ exitCode: 0, truncatedBytes: 90 });
    expect(out.stdout).toContain('[... 90 bytes cut ...]');
  });

  it('refuses a config whose match is not a regular expression', () => {
    expect(() => MemorySubprocessConfig.parse({ scripts: [{ match: 'a(', stdout: '' }] })).toThrow(/not a regular expression/);
  });
});
