/**
 * The `acp-client` subprocess provider: commands run in a terminal of the
 * editor that drives the session over ACP (`terminal/create`), so the user
 * sees them where they work. They are confined exactly as the `local`
 * provider's are: the sandbox seam wraps each argv first (bwrap, or `off`
 * when asked), and the wrapped argv is what the client runs; the first
 * command is preceded by the same probe, so a sandbox that cannot start fails
 * closed here too. The environment is the spec's, whole: the argv starts
 * with `env -i` and the spec's variables, since a client adds the variables
 * it is given to its own (which may hold secrets).
 *
 * What a terminal cannot do is refused, not approximated: a confinement that
 * must run the command as another user (bridle as root in someone else's
 * workspace) is `SANDBOX_UNAVAILABLE`. A terminal merges stdout and stderr
 * and keeps the end of the output: the result's stdout says so when the
 * client cut it.
 */
import { ACP_CLIENT, SANDBOX, SUBPROCESS } from '../../ports/index.js';
import type { AcpClient, AcpTerminal, TerminalExit } from '../../ports/acp-client.js';
import { defineProvider, ProviderSetupError } from '../../ports/provider.js';
import type { Subprocess, SubprocessResult } from '../../ports/subprocess.js';
import { ToolError } from '../../ports/tool-error.js';
import { sandboxUnavailable, type Launcher } from '../../safety/sandbox.js';
import { createLocalSubprocess, LocalSubprocessConfig, type LocalSubprocessOptions } from './local.js';

/** Node's timers overflow past 2^31-1 ms and fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const noResult = (): SubprocessResult => ({ exitCode: null, signal: null, stdout: '', stderr: '', timedOut: false, truncatedBytes: 0 });

/**
 * A launcher whose every command runs in one of `client`'s terminals.
 * Contract: as `spawnProcess` — resolves for every command that started
 * (a kill, a timeout, an abort: in the result), rejects when it could not be
 * started (the client refused `terminal/create`); the terminal is always
 * released.
 */
export function terminalLauncher(client: AcpClient): Launcher {
  return async (launch) => {
    if (launch.uid !== undefined || launch.gid !== undefined) {
      throw sandboxUnavailable(`the sandbox would run this command as uid ${launch.uid}, which a terminal of the ACP client cannot do`);
    }
    if (launch.signal.aborted) return noResult();
    const env = Object.entries(launch.env).map(([k, v]) => `${k}=${v}`);
    let terminal: AcpTerminal;
    try {
      terminal = await client.createTerminal({ command: 'env', args: ['-i', ...env, ...launch.argv], cwd: launch.cwd, outputByteLimit: Math.max(1, launch.maxOutputBytes) }, launch.signal);
    } catch (err) {
      throw new ToolError('SPAWN_FAILED', `The editor's terminal could not start the command: ${(err as Error).message}`);
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    try {
      const stopped = new Promise<'timeout' | 'abort'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), Math.min(launch.timeoutMs, MAX_TIMER_MS));
        onAbort = () => resolve('abort');
        launch.signal.addEventListener('abort', onAbort, { once: true });
      });
      const exited = terminal.waitForExit();
      const first = await Promise.race([exited, stopped]);
      let exit: TerminalExit;
      let timedOut = false;
      if (first === 'timeout' || first === 'abort') {
        timedOut = first === 'timeout';
        await terminal.kill().catch(() => undefined);
        exit = await exited.catch(() => ({ exitCode: null, signal: 'SIGKILL' }));
      } else exit = first;
      const out = await terminal.output().catch(() => ({ output: '', truncated: false }));
      const stdout = out.truncated ? `[the editor's terminal kept only the last ${launch.maxOutputBytes} bytes of output]\n${out.output}` : out.output;
      return { exitCode: exit.exitCode ?? null, signal: exit.signal ?? null, stdout, stderr: '', timedOut, truncatedBytes: 0 };
    } finally {
      clearTimeout(timer);
      if (onAbort) launch.signal.removeEventListener('abort', onAbort);
      await terminal.release().catch(() => undefined);
    }
  };
}

/** Contract: as `createLocalSubprocess`, with every command started in `client`'s terminals. */
export function createAcpClientSubprocess(o: Omit<LocalSubprocessOptions, 'launcher' | 'env'> & { client: AcpClient; env?: LocalSubprocessOptions['env'] }): Subprocess {
  const inner = createLocalSubprocess({ ...o, launcher: terminalLauncher(o.client) });
  return { ...inner, id: o.sandbox.confines ? `${o.sandbox.id}(acp-client)` : 'acp-client' };
}

export const acpClientSubprocessProvider = defineProvider({
  seam: SUBPROCESS,
  name: 'acp-client',
  config: LocalSubprocessConfig,
  inject: [SANDBOX, ACP_CLIENT],
  create: (config, services) => {
    const client = services.get(ACP_CLIENT);
    if (!client.capabilities.terminal) throw new ProviderSetupError(`the ACP client ${client.name} offers no terminal; use the local subprocess row instead`);
    const { provider, policy } = services.get(SANDBOX);
    return createAcpClientSubprocess({ sandbox: provider, policy, client, ...config });
  },
});
