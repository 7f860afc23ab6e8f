/**
 * The `acp-client` subprocess provider's own logic against terminals that
 * record what they are asked (the SDK-driven tests run it behind real ACP
 * clients): the argv the client runs, deadlines and aborts that kill, what a
 * terminal cannot do refused, the terminal always released.
 */
import { describe, expect, it } from 'vitest';
import { AcpClientError, type AcpClient, type TerminalExit, type TerminalRequest } from '../../ports/acp-client.js';
import type { Confinement, Sandbox } from '../../ports/sandbox.js';
import { createOffSandbox } from '../sandbox/off.js';
import { createAcpClientSubprocess, terminalLauncher } from './acp-client.js';

interface Fake {
  client: AcpClient;
  created: TerminalRequest[];
  killed: number;
  released: number;
  exit: (e: TerminalExit) => void;
}

function fakeClient(o: { output?: string; truncated?: boolean; refuse?: boolean; exitOnKill?: boolean } = {}): Fake {
  const f: Fake = { client: undefined as unknown as AcpClient, created: [], killed: 0, released: 0, exit: () => undefined };
  f.client = {
    name: 'editor',
    capabilities: { readTextFile: false, writeTextFile: false, terminal: true },
    readTextFile: async () => '',
    writeTextFile: async () => undefined,
    createTerminal: async (request) => {
      if (o.refuse) throw new AcpClientError('terminal/create: not allowed', -32603);
      f.created.push(request);
      let settle!: (e: TerminalExit) => void;
      const exited = new Promise<TerminalExit>((r) => (settle = r));
      f.exit = settle;
      return {
        id: `t${f.created.length}`,
        waitForExit: () => exited,
        output: async () => ({ output: o.output ?? 'out\n', truncated: o.truncated ?? false }),
        kill: async () => {
          f.killed++;
          if (o.exitOnKill !== false) settle({ exitCode: null, signal: 'SIGKILL' });
        },
        release: async () => void f.released++,
      };
    },
  };
  return f;
}

const launch = (over: Partial<Parameters<ReturnType<typeof terminalLauncher>>[0]> = {}) => ({
  argv: ['bash', '-c', 'echo hi'],
  cwd: '/ws',
  timeoutMs: 10_000,
  maxOutputBytes: 1000,
  env: { PATH: '/bin', LANG: 'C' },
  signal: new AbortController().signal,
  ...over,
});

describe('commands in the ACP client\'s terminals', () => {
  it('runs `env -i` with the spec\'s environment and argv, in its cwd, capped at its output limit; the exit and output come back; the terminal is released', async () => {
    const f = fakeClient({ output: 'hi\n' });
    const running = terminalLauncher(f.client)(launch());
    await new Promise((r) => setTimeout(r, 0));
    f.exit({ exitCode: 3, signal: null });
    expect(await running).toEqual({ exitCode: 3, signal: null, stdout: 'hi\n', stderr: '', timedOut: false, truncatedBytes: 0 });
    expect(f.created).toEqual([{ command: 'env', args: ['-i', 'PATH=/bin', 'LANG=C', 'bash', '-c', 'echo hi'], cwd: '/ws', outputByteLimit: 1000 }]);
    expect(f.released).toBe(1);
  });

  it('a deadline kills the command (timedOut); an abort kills it too; both release the terminal', async () => {
    const f = fakeClient();
    expect(await terminalLauncher(f.client)(launch({ timeoutMs: 20 }))).toMatchObject({ timedOut: true, signal: 'SIGKILL' });
    const stop = new AbortController();
    const running = terminalLauncher(f.client)(launch({ signal: stop.signal }));
    await new Promise((r) => setTimeout(r, 5));
    stop.abort();
    expect(await running).toMatchObject({ timedOut: false, exitCode: null });
    expect([f.killed, f.released]).toEqual([2, 2]);
  });

  it('says so when the client cut the output; refuses to run as another user; a refused terminal/create is SPAWN_FAILED', async () => {
    const cut = fakeClient({ output: 'tail', truncated: true });
    const running = terminalLauncher(cut.client)(launch({ maxOutputBytes: 4 }));
    await new Promise((r) => setTimeout(r, 0));
    cut.exit({ exitCode: 0, signal: null });
    expect((await running).stdout).toBe("[the editor's terminal kept only the last 4 bytes of output]\ntail");
    await expect(terminalLauncher(fakeClient().client)(launch({ uid: 1000, gid: 1000 }))).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
    await expect(terminalLauncher(fakeClient({ refuse: true }).client)(launch())).rejects.toMatchObject({ code: 'SPAWN_FAILED', message: expect.stringContaining('not allowed') });
  });

  it('goes through the sandbox seam: the client runs the confined argv, and a sandbox that cannot confine fails the command closed before the client is asked', async () => {
    const f = fakeClient();
    const wrapping: Sandbox = {
      id: 'wrap',
      confines: true,
      confine: (argv): Confinement => ({ argv: ['wrap', '--', ...argv], finish: async () => [] }),
      describe: () => 'wrap',
    };
    const sub = createAcpClientSubprocess({ sandbox: wrapping, policy: { mode: 'workspace-write', workspace: '/ws', network: false }, client: f.client, env: { PATH: '/bin' } });
    expect(sub.id).toBe('wrap(acp-client)');
    const spec = sub.resolve({ argv: ['bash', '-c', 'true'] });
    const running = sub.run(spec, new AbortController().signal);
    // The probe first, then the command: each wrapped.
    for (let i = 0; i < 2; i++) {
      while (f.created.length <= i) await new Promise((r) => setTimeout(r, 1));
      f.exit({ exitCode: 0, signal: null });
    }
    await running;
    expect(f.created.map((c) => c.args.slice(c.args.indexOf('wrap')))).toEqual([['wrap', '--', 'true'], ['wrap', '--', 'bash', '-c', 'true']]);

    const missing: Sandbox = { ...wrapping, confine: () => { throw Object.assign(new Error('Sandbox unavailable: no wrap'), { code: 'SANDBOX_UNAVAILABLE' }); } };
    const g = fakeClient();
    const closed = createAcpClientSubprocess({ sandbox: missing, policy: { mode: 'workspace-write', workspace: '/ws', network: false }, client: g.client });
    await expect(closed.run(closed.resolve({ argv: ['true'] }), new AbortController().signal)).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
    expect(g.created).toEqual([]);
    expect(createAcpClientSubprocess({ sandbox: createOffSandbox(), policy: { mode: 'full', workspace: '/ws', network: true }, client: g.client }).id).toBe('acp-client');
  });
});
