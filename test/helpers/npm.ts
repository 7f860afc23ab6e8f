/**
 * Commands as a user types them (npm, npx, node), for the tests of the package
 * and of `npm start`: async, so an in-process server can answer them.
 */
import { spawn } from 'node:child_process';

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment without what an outer `npm test` sets for this repository
 * (`npm_package_*`, `npm_lifecycle_*`, its local prefix): a command here must
 * act on the directory it runs in. npm's own settings (`npm_config_*`:
 * registry, cache, proxy) pass through.
 */
export function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    const outer = (k.startsWith('npm_') && !k.startsWith('npm_config_')) || k === 'npm_config_local_prefix' || k === 'INIT_CWD';
    if (!outer) env[k] = v;
  }
  return { ...env, ...extra };
}

export function runCommand(command: string, args: readonly string[], o: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: o.cwd, env: o.env ?? userEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
