/**
 * The `local` subprocess provider: commands run on this machine, each one
 * confined by the sandbox seam (`safety/sandbox.ts` with a provider from
 * `adapters/sandbox/`: `bwrap`, or `off` when asked) and started by
 * `spawn.ts`, which kills everything a call started when it ends.
 *
 * `resolve` is the one place a command's defaults are filled: the timeout
 * and the output cap from this provider's config, the environment (the
 * host's, less secrets), the cwd (the workspace) and the confinement the
 * sandbox will apply. `run` runs that spec and nothing else.
 */
import { z } from 'zod';
import { SANDBOX, SUBPROCESS } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import type { Subprocess, SubprocessConfinement } from '../../ports/subprocess.js';
import { ToolError } from '../../ports/tool-error.js';
import { commandEnv } from '../../safety/command-env.js';
import { confinementOf, createConfinedLauncher, type Launcher } from '../../safety/sandbox.js';
import type { Sandbox, SandboxPolicy } from '../../ports/sandbox.js';
import { spawnProcess } from './spawn.js';

export const LocalSubprocessConfig = z.strictObject({
  timeoutMs: z.number().int().min(1).default(120_000).describe('A command the request gives no timeout is killed after this many milliseconds.'),
  maxOutputBytes: z.number().int().min(0).default(64 * 1024).describe('Captured stdout+stderr beyond this many bytes is cut from the middle.'),
});
export type LocalSubprocessConfig = z.infer<typeof LocalSubprocessConfig>;

export interface LocalSubprocessOptions extends Partial<LocalSubprocessConfig> {
  sandbox: Sandbox;
  /** What every command runs under; its workspace is where commands start unless a request says otherwise. */
  policy: SandboxPolicy;
  /** The environment commands start from before secrets are stripped (default: this process's). */
  env?: Readonly<Record<string, string | undefined>>;
  /** What starts the (confined) process; tests pass a recorder. Default `spawnProcess`. */
  launcher?: Launcher;
}

const same = (a: SubprocessConfinement, b: SubprocessConfinement) => a.by === b.by && a.mode === b.mode && a.network === b.network;

export function createLocalSubprocess(o: LocalSubprocessOptions): Subprocess {
  const config = LocalSubprocessConfig.parse({ timeoutMs: o.timeoutMs, maxOutputBytes: o.maxOutputBytes });
  const confinement = confinementOf(o.sandbox, o.policy);
  const launch = createConfinedLauncher(o.launcher ?? spawnProcess, o.sandbox, o.policy);
  return {
    id: o.sandbox.confines ? `${o.sandbox.id}(local)` : 'local',
    resolve: (request) => ({
      argv: [...request.argv],
      cwd: request.cwd ?? o.policy.workspace,
      timeoutMs: request.timeoutMs ?? config.timeoutMs,
      maxOutputBytes: request.maxOutputBytes ?? config.maxOutputBytes,
      env: commandEnv(request.env ?? o.env ?? process.env),
      sandbox: confinement,
    }),
    async run(spec, signal) {
      // A spec states how it will be confined: one that says otherwise than this sandbox would lie about what ran.
      if (!same(spec.sandbox, confinement)) {
        throw new ToolError('INVALID_SPEC', `The command did not run: its spec asks for confinement ${JSON.stringify(spec.sandbox)}, but this provider confines with ${JSON.stringify(confinement)}. Get the spec from resolve().`);
      }
      const { sandbox: _stated, ...rest } = spec;
      return launch({ ...rest, signal });
    },
  };
}

export const localSubprocessProvider = defineProvider({
  seam: SUBPROCESS,
  name: 'local',
  config: LocalSubprocessConfig,
  inject: [SANDBOX],
  create: (config, services) => {
    const { provider, policy } = services.get(SANDBOX);
    return createLocalSubprocess({ sandbox: provider, policy, ...config });
  },
});
