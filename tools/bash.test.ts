import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalShell } from '../adapters/subprocess/local.js';
import { BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_OUTPUT_BYTES, bashTool, formatShellResult, type BashArgs } from './bash.js';
import { createTempWorkspace, type TempWorkspace } from './testing.js';
import type { Shell, ShellRequest, ShellResult } from '../ports/tools.js';

let t: TempWorkspace;
beforeEach(() => {
  t = createTempWorkspace({ shell: createLocalShell() });
});
afterEach(() => t.cleanup());

const run = (args: BashArgs, ctx = t.ctx) => bashTool.execute(bashTool.parameters.parse(args), ctx);

function fakeShell(result: Partial<ShellResult>, seen: ShellRequest[] = []): Shell {
  return {
    id: 'fake',
    run: async (request) => {
      seen.push(request);
      return { exitCode: 0, signal: null, stdout: '', stderr: '', timedOut: false, truncatedBytes: 0, ...result };
    },
  };
}

describe('bash (local shell)', () => {
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

describe('bash (fake shell)', () => {
  it('asks the shell for bash -c in the workspace with the default timeout and cap', async () => {
    const seen: ShellRequest[] = [];
    await run({ command: 'ls' }, { ...t.ctx, shell: fakeShell({}, seen) });
    expect(seen[0]).toMatchObject({
      argv: ['bash', '-c', 'ls'],
      cwd: t.workspace,
      timeoutMs: BASH_DEFAULT_TIMEOUT_MS,
      maxOutputBytes: BASH_MAX_OUTPUT_BYTES,
    });
  });

  it('turns a shell that cannot start into SPAWN_FAILED', async () => {
    const broken: Shell = { id: 'bwrap', run: () => Promise.reject(new Error('bubblewrap is not installed')) };
    const out = await run({ command: 'ls' }, { ...t.ctx, shell: broken });
    expect(out).toMatchObject({ status: 'error', code: 'SPAWN_FAILED' });
    expect(out.content).toContain('bubblewrap is not installed');
  });

  it('formats signals and empty output', () => {
    expect(formatShellResult({ exitCode: null, signal: 'SIGKILL', stdout: '', stderr: '', timedOut: false, truncatedBytes: 0 })).toBe(
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

describe('the environment a command sees', () => {
  it('drops every variable that looks like a secret: tokens, passwords, keys, cloud credentials, URLs with a password', async () => {
    const { commandEnv } = await import('./bash.js');
    const secrets = {
      GITHUB_TOKEN: 'ghp', GH_TOKEN: 'gh', NPM_TOKEN: 'npm', NODE_AUTH_TOKEN: 'n', HF_TOKEN: 'hf', VAULT_TOKEN: 'v',
      AWS_ACCESS_KEY_ID: 'AKIA', AWS_SECRET_ACCESS_KEY: 's', AWS_SESSION_TOKEN: 't', AWS_PROFILE: 'prod',
      GOOGLE_APPLICATION_CREDENTIALS: '/k.json', AZURE_CLIENT_SECRET: 'a', AZURE_CLIENT_ID: 'id', ARM_CLIENT_SECRET: 'a',
      STRIPE_SECRET: 's', DB_PASSWORD: 'p', PGPASSWORD: 'p', MYSQL_PWD: 'p', SIGNING_KEY: 'k', SSH_PRIVATE_KEY: 'k', GPG_PASSPHRASE: 'p',
      SENTRY_AUTH_TOKEN: 's', npm_config__authToken: 'x', DOCKER_AUTH_CONFIG: '{}', SSH_AUTH_SOCK: '/run/agent', KRB5CCNAME: 'FILE:/tmp/k',
      DATABASE_URL: 'postgres://app:hunter2@db:5432/app', SESSION_COOKIE: 'c', SERVICE_CREDENTIALS: 'c', ENCRYPTION_KEY: 'k',
    };
    const kept = { PATH: '/bin', HOME: '/root', PWD: '/w', OLDPWD: '/', LANG: 'C.UTF-8', TERM: 'xterm', USER: 'me', SHELL: '/bin/bash', NODE_ENV: 'test', CI: 'true', EDITOR: 'vi', REDIS_URL: 'redis://cache:6379', KEYBOARD_LAYOUT: 'us' };
    expect(commandEnv({ ...secrets, ...kept })).toEqual(kept);
  });


  it('drops bridle’s secrets and keeps the rest', async () => {
    const { commandEnv } = await import('./bash.js');
    expect(commandEnv({ PATH: '/bin', OPENAI_API_KEY: 'sk', BRIDLE_TOKEN: 't', ANTHROPIC_API_KEY: 'x', HOME: '/root' })).toEqual({ PATH: '/bin', HOME: '/root' });
  });
});
