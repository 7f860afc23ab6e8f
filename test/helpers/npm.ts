/**
 * Commands as a user types them (npm, npx, node), for the tests of the package
 * and of `npm start`: async, so an in-process server can answer them.
 */
import { spawn } from 'node:child_process';
import { cpSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

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

/** The working tree of `repo` as a fresh clone has it after `npm ci`, at `dir`: sources and node_modules (linked), no build output. */
export function freshCheckout(repo: string, dir: string): string {
  const left = new Set(['node_modules', 'dist', '.git', '.bridle', '.vitest-report.json']);
  cpSync(repo, dir, { recursive: true, filter: (src) => !left.has(src.slice(repo.length).split('/')[0]!) });
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}
