/**
 * The `bwrap` sandbox (Debian's bubblewrap): the root read-only, the workspace
 * writable (in `workspace-write`), a private /tmp, no network unless the
 * policy allows it, its own PID namespace, no capabilities, killed with its
 * parent, in a new session (no reaching the terminal). The binary is
 * `$BRIDLE_BWRAP` when set, else `bwrap` on PATH; when neither is there,
 * `confine` throws and the command never runs.
 *
 * Order matters: `--tmpfs /tmp` comes before the workspace bind, or it would
 * hide a workspace that lives under /tmp. `--cap-drop ALL` matters when
 * bridle runs as root: with its capabilities a command could remount `/`
 * read-write, and through /proc reach the host's root (`--unshare-pid`).
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { sandboxUnavailable, type Sandbox, type SandboxPolicy } from '../../actors/sandbox.js';

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Where bwrap is, or why it is not there. */
export function findBwrap(env: NodeJS.ProcessEnv = process.env): { path: string } | { missing: string } {
  const forced = env.BRIDLE_BWRAP;
  if (forced !== undefined && forced !== '') {
    return isExecutableFile(forced) ? { path: path.resolve(forced) } : { missing: `BRIDLE_BWRAP is ${forced}, which is not an executable file` };
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, 'bwrap');
    if (isExecutableFile(candidate)) return { path: candidate };
  }
  return { missing: 'bubblewrap (bwrap) is not on PATH' };
}

const inside = (parent: string, child: string) => child === parent || child.startsWith(parent.endsWith('/') ? parent : `${parent}/`);

/** Contract: pure; the bwrap argv for `argv` under `policy`. */
export function bwrapArgv(bin: string, argv: readonly string[], policy: SandboxPolicy): string[] {
  const ws = policy.workspace;
  const a = [bin];
  if (policy.mode === 'full') {
    a.push('--bind', '/', '/', '--dev', '/dev', '--proc', '/proc');
  } else {
    a.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp');
    a.push(policy.mode === 'workspace-write' ? '--bind' : '--ro-bind', ws, ws);
  }
  for (const p of policy.protect ?? []) if (policy.mode === 'full' || inside(ws, p)) a.push('--ro-bind-try', p, p);
  if (!policy.network) a.push('--unshare-net');
  a.push('--unshare-pid', '--cap-drop', 'ALL', '--die-with-parent', '--new-session', '--chdir', policy.cwd ?? ws, '--', ...argv);
  return a;
}

function check(argv: readonly string[], policy: SandboxPolicy): void {
  if (argv.length === 0) throw new Error('confine: empty argv');
  for (const p of [policy.workspace, policy.cwd ?? policy.workspace, ...(policy.protect ?? [])]) {
    if (!path.isAbsolute(p)) throw sandboxUnavailable(`the sandbox needs absolute paths (got ${JSON.stringify(p)})`);
  }
}

export function createBwrapSandbox(o: { env?: NodeJS.ProcessEnv } = {}): Sandbox {
  const env = o.env ?? process.env;
  return {
    id: 'bwrap',
    confines: true,
    confine(argv, policy) {
      check(argv, policy);
      const found = findBwrap(env);
      if ('missing' in found) throw sandboxUnavailable(found.missing);
      // Compared with the (real) workspace path, so resolve symlinks first.
      const protect = (policy.protect ?? []).map((p) => {
        try {
          return realpathSync(p);
        } catch {
          return p;
        }
      });
      return bwrapArgv(found.path, argv, { ...policy, protect });
    },
    describe(policy) {
      const found = findBwrap(env);
      if ('missing' in found) return `sandbox: bwrap UNAVAILABLE (${found.missing}) — shell commands will fail, never run unconfined; install bubblewrap or pass --sandbox off`;
      const net = policy.network ? 'network allowed' : 'no network';
      if (policy.mode === 'full') return `sandbox: bwrap, full — commands may write anywhere you can; ${net}`;
      if (policy.mode === 'read-only') return `sandbox: bwrap, read-only — commands may write only to a private /tmp; ${net}`;
      return `sandbox: bwrap, workspace-write — commands may write only in ${policy.workspace} and a private /tmp; ${net}`;
    },
  };
}
