/**
 * The `bwrap` sandbox (Debian's bubblewrap): the root read-only, the workspace
 * writable (in `workspace-write`) but every `.git` in it read-only, bridle's homes
 * hidden, a private /tmp and /dev/shm of bounded size, no network unless the
 * policy allows it, its own user, PID, IPC, UTS and cgroup namespaces, no
 * capabilities, killed with its parent, in a new session (no reaching the
 * terminal). ADR 0004 and 0010 say why each piece is there.
 *
 * The binary is `$BRIDLE_BWRAP` (absolute) when set, else `bwrap` on PATH,
 * looked up once, never in a relative PATH entry or inside the workspace
 * (find-program.ts); when there is none, `confine` throws and the command
 * never runs.
 *
 * Order matters: `--tmpfs /tmp` comes before the workspace bind, or it would
 * hide a workspace that lives under /tmp; the read-only binds over /proc come
 * after `--proc`. `--cap-drop ALL` matters when bridle runs as root: with its
 * capabilities a command could remount `/` read-write, and through /proc reach
 * the host's root (`--unshare-pid`).
 */
import { execFileSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { SANDBOX, SESSION } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import { SANDBOX_MODES, type SandboxMode, type SandboxService } from '../../ports/sandbox.js';
import { type Confinement, resolveSandboxLimits, type Sandbox, type SandboxLimits, type SandboxPolicy } from '../../ports/sandbox.js';
import { sandboxUnavailable } from '../../safety/sandbox.js';
import type { SubprocessResult } from '../../ports/subprocess.js';
import { createCallCgroup, findCgroupParents, type CallCgroup, type CgroupParents } from './cgroup.js';
import { checkProgram, findProgram, type Found } from './find-program.js';
import { findGitEntries } from './git-entries.js';
import { limitHits, type Enforced } from './limit-hits.js';

/** Where bwrap is, or why it is not there: `$BRIDLE_BWRAP` (absolute), else PATH; never inside `workspace`. */
export function findBwrap(env: NodeJS.ProcessEnv = process.env, workspace = process.cwd()): Found {
  const forced = env.BRIDLE_BWRAP;
  if (forced !== undefined && forced !== '') return checkProgram(forced, workspace, 'BRIDLE_BWRAP');
  const found = findProgram('bwrap', env, workspace);
  return 'path' in found ? found : { missing: 'bubblewrap (bwrap) is not on PATH' };
}

/**
 * Kernel knobs a process that is uid 0 on the host may write without any
 * capability (sysctls, sysrq): bound read-only from the host's /proc over the
 * sandbox's own. `/sys` is read-only with the root, and bound read-only in
 * `full` mode too.
 */
const PROC_READ_ONLY = ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus', '/proc/fs'];

const MiB = 1024 * 1024;
const inside = (parent: string, child: string) => child === parent || child.startsWith(parent.endsWith('/') ? parent : `${parent}/`);

/** Who a command runs as, and so what can hold it. */
export interface Identity {
  /** uid 0 on the host: bridle is root and so is the workspace's owner. No rlimit on processes holds for it. */
  asRoot: boolean;
  /** Run as this user instead of bridle's own. */
  runAs?: { uid: number; gid: number };
}

/**
 * Contract: pure. bridle running as root runs a command as the workspace's
 * owner, so what it creates belongs to them and it is nobody special on the
 * host; only a workspace root owns keeps root (uid 0 in a user namespace of
 * its own, capabilities dropped, kernel knobs read-only), since nothing else
 * could write there. Group 0 is never handed on: a non-root owner whose
 * workspace has group root gets `nogroup` (65534).
 */
export function commandIdentity(euid: number, owner: { uid: number; gid: number }): Identity {
  if (euid !== 0) return { asRoot: false };
  if (owner.uid === 0) return { asRoot: true };
  return { asRoot: false, runAs: { uid: owner.uid, gid: owner.gid === 0 ? 65534 : owner.gid } };
}

/** What the provider resolved for one call: the programs, what this bwrap knows, who runs, what is hidden, the limits. */
export interface BwrapSpec {
  bin: string;
  /** Options this bwrap lists in its `--help` (`--disable-userns` needs 0.8, `--size` a recent one). */
  features: ReadonlySet<string>;
  identity: Identity;
  /** Absolute `prlimit`, run inside the sandbox to set RLIMIT_NPROC (not for root, which the kernel exempts). */
  prlimit?: string;
  /** Existing directories to hide. */
  hide: readonly string[];
  limits: SandboxLimits;
}

/** Contract: pure; the bwrap argv for `argv` under `policy`. */
export function bwrapArgv(spec: BwrapSpec, argv: readonly string[], policy: SandboxPolicy): string[] {
  const ws = policy.workspace;
  const size = spec.features.has('--size') ? ['--size', String(spec.limits.tmpMb * MiB)] : [];
  const a = [spec.bin];
  if (policy.mode === 'full') a.push('--bind', '/', '/', '--ro-bind', '/sys', '/sys');
  else a.push('--ro-bind', '/', '/');
  a.push('--dev', '/dev', ...size, '--tmpfs', '/dev/shm', '--proc', '/proc');
  for (const p of PROC_READ_ONLY) a.push('--ro-bind-try', p, p);
  if (policy.mode !== 'full') {
    a.push(...size, '--tmpfs', '/tmp');
    a.push(policy.mode === 'workspace-write' ? '--bind' : '--ro-bind', ws, ws);
  }
  for (const p of policy.protect ?? []) if (policy.mode === 'full' || inside(ws, p)) a.push('--ro-bind-try', p, p);
  for (const p of spec.hide) a.push('--tmpfs', p, '--remount-ro', p);
  a.push('--unshare-user');
  if (spec.identity.asRoot) a.push('--uid', '0', '--gid', '0');
  if (spec.features.has('--disable-userns')) a.push('--disable-userns');
  a.push('--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  if (!policy.network) a.push('--unshare-net');
  a.push('--unshare-pid', '--cap-drop', 'ALL', '--die-with-parent', '--new-session', '--chdir', policy.cwd ?? ws, '--');
  if (spec.prlimit && !spec.identity.asRoot) a.push(spec.prlimit, `--nproc=${spec.limits.processes}:${spec.limits.processes}`, '--');
  a.push(...argv);
  return a;
}

/** Joins the cgroups named before `--` (writing its own pid: nothing has forked yet), then execs the rest. */
const JOIN_CGROUPS = 'for f do if [ "$f" = -- ]; then shift; exec "$@"; fi; echo $$ > "$f" || { echo "bridle: could not join the cgroup $f" >&2; exit 125; }; shift; done; exit 125';

function check(argv: readonly string[], policy: SandboxPolicy): void {
  if (argv.length === 0) throw new Error('confine: empty argv');
  for (const p of [policy.workspace, policy.cwd ?? policy.workspace, ...(policy.protect ?? []), ...(policy.hide ?? [])]) {
    if (!path.isAbsolute(p)) throw sandboxUnavailable(`the sandbox needs absolute paths (got ${JSON.stringify(p)})`);
  }
}

const realOr = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};
const isDir = (p: string) => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/**
 * Whether `uid`/`gid` can reach `dir` (search permission on it and every
 * parent, by mode bits). An unprivileged bwrap cannot mount over a directory
 * its user cannot reach, and needs not: that user cannot read it anyway.
 */
function reachableBy(dir: string, ids: { uid: number; gid: number }): boolean {
  for (let p = dir; ; p = path.dirname(p)) {
    let st;
    try {
      st = statSync(p);
    } catch {
      return false;
    }
    const bit = st.uid === ids.uid ? 0o100 : st.gid === ids.gid ? 0o010 : 0o001;
    if ((st.mode & bit) === 0) return false;
    if (p === path.dirname(p)) return true;
  }
}

function helpOptions(bin: string): Set<string> {
  try {
    const help = execFileSync(bin, ['--help'], { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'pipe'] });
    return new Set(help.match(/--[a-z][a-z-]*/g) ?? []);
  } catch {
    return new Set();
  }
}

/** What is resolved once per sandbox, at its first use. */
interface Tools {
  bin: string;
  features: ReadonlySet<string>;
  prlimit?: string;
  sh?: string;
  cgroups: CgroupParents;
}

export interface BwrapOptions {
  env?: NodeJS.ProcessEnv;
  /** bridle's effective uid (tests pass another). */
  euid?: number;
}

/** The programs the sandbox uses, looked up for `workspace` (never inside it); undefined helpers are absent. */
function findTools(env: NodeJS.ProcessEnv, workspace: string): Tools | { missing: string } {
  const found = findBwrap(env, workspace);
  if ('missing' in found) return found;
  const helper = (name: string) => {
    const f = findProgram(name, env, workspace);
    return 'path' in f ? f.path : undefined;
  };
  return { bin: found.path, features: helpOptions(found.path), prlimit: helper('prlimit'), sh: helper('sh'), cgroups: findCgroupParents() };
}

/** How each limit holds for a command run with `identity`. */
function enforcement(t: Tools, identity: Identity): { enforced: Enforced; cgroups: CgroupParents } {
  // A cgroup is joined by the wrapper as bridle's own user; one handed to another user could not be joined under cgroup v2.
  const cgroups: CgroupParents = t.sh && !identity.runAs ? { pids: t.cgroups.pids, memory: t.cgroups.memory } : {};
  const processes = cgroups.pids ? 'cgroup' : t.prlimit && !identity.asRoot ? 'rlimit' : undefined;
  return { enforced: { processes, memory: cgroups.memory ? 'cgroup' : undefined, tmp: t.features.has('--size') }, cgroups };
}

/** Throws what `statSync` throws for an unreadable workspace. */
function identityFor(euid: number, workspace: string): Identity {
  const st = statSync(workspace);
  return commandIdentity(euid, { uid: st.uid, gid: st.gid });
}

/**
 * One command's bwrap argv: who runs it, which paths are bound read-only, which homes are hidden.
 * Contract: throws `sandboxUnavailable` when the workspace cannot be read.
 */
function confinedArgv(t: Tools, euid: number, argv: readonly string[], policy: SandboxPolicy, limits: SandboxLimits): { inner: string[]; identity: Identity } {
  let identity: Identity;
  try {
    identity = identityFor(euid, policy.workspace);
  } catch (err) {
    throw sandboxUnavailable(`cannot read the workspace ${policy.workspace} (${(err as Error).message})`);
  }
  // Compared with the (real) workspace path, so resolve symlinks first. Nested repositories are found per
  // command, so one a previous command cloned is read-only to the next (a read-only workspace needs none).
  const nested = policy.protectGit && policy.mode !== 'read-only' ? findGitEntries(policy.workspace).found : [];
  const protect = [...new Set([...(policy.protect ?? []).map(realOr), ...nested])];
  const runAs = identity.runAs;
  const hide = [...new Set((policy.hide ?? []).map(realOr))].filter((d) => isDir(d) && (!runAs || reachableBy(d, runAs)));
  const spec: BwrapSpec = { bin: t.bin, features: t.features, identity, prlimit: t.prlimit, hide, limits };
  return { inner: bwrapArgv(spec, argv, { ...policy, protect }), identity };
}

/**
 * The run: `inner` in a cgroup of its own where one holds a limit, and what the limits stopped once it ends.
 * Contract: throws `sandboxUnavailable` when the cgroup cannot be made (the command never runs unlimited).
 */
function confinement(t: Tools, inner: string[], identity: Identity, limits: SandboxLimits): Confinement {
  const { enforced, cgroups } = enforcement(t, identity);
  let cg: CallCgroup | undefined;
  if (cgroups.pids || cgroups.memory) {
    try {
      cg = createCallCgroup(cgroups, { processes: limits.processes, memoryBytes: limits.memoryMb * MiB });
    } catch (err) {
      throw sandboxUnavailable(`could not make the command's cgroup (${(err as Error).message})`);
    }
  }
  const wrapped = cg ? [t.sh!, '-c', JOIN_CGROUPS, 'bridle-join', ...cg.procs, '--', ...inner] : inner;
  return {
    argv: wrapped,
    runAs: identity.runAs,
    async finish(result: SubprocessResult | undefined) {
      const counters = cg?.counters();
      // Removed in the background: the result need not wait for the kernel to let go of an emptied cgroup.
      void cg?.dispose();
      return result ? limitHits({ stderr: result.stderr, limits, enforced, counters }) : [];
    },
  };
}

/** The sandbox in a line: where commands may write, the network, who they run as, the limits that hold. */
function describeBwrap(t: Tools, euid: number, policy: SandboxPolicy): string {
  const net = policy.network ? 'network allowed' : 'no network';
  const where =
    policy.mode === 'full'
      ? 'bwrap, full — commands may write anywhere you can'
      : policy.mode === 'read-only'
        ? 'bwrap, read-only — commands may write only to a private /tmp'
        : `bwrap, workspace-write — commands may write only in ${policy.workspace} and a private /tmp`;
  let who: string;
  let held: string;
  try {
    const identity = identityFor(euid, policy.workspace);
    who = identity.runAs ? `as uid ${identity.runAs.uid} (the workspace's owner)` : identity.asRoot ? 'as root in a user namespace, without capabilities' : 'as you';
    const limits = policy.limits ?? resolveSandboxLimits();
    const { enforced } = enforcement(t, identity);
    const parts = [
      enforced.processes ? `${limits.processes} processes` : 'processes unlimited',
      enforced.memory ? `${limits.memoryMb} MiB memory` : 'memory unlimited',
      enforced.tmp ? `${limits.tmpMb} MiB /tmp` : '/tmp unlimited',
    ];
    held = `limits: ${parts.join(', ')}`;
  } catch {
    who = 'as you';
    held = 'limits unknown';
  }
  return `sandbox: ${where}; ${net}; ${who}; ${held}`;
}

export function createBwrapSandbox(o: BwrapOptions = {}): Sandbox {
  const env = o.env ?? process.env;
  const euid = o.euid ?? process.geteuid?.() ?? -1;
  let tools: Tools | undefined;

  const resolve = (workspace: string): Tools | { missing: string } => {
    if (tools) {
      // Resolved once; a later policy's workspace must not contain it either.
      const again = checkProgram(tools.bin, workspace, 'bwrap');
      return 'missing' in again ? again : tools;
    }
    const found = findTools(env, workspace);
    if (!('missing' in found)) tools = found;
    return found;
  };

  return {
    id: 'bwrap',
    confines: true,
    confine(argv, policy): Confinement {
      check(argv, policy);
      const t = resolve(policy.workspace);
      if ('missing' in t) throw sandboxUnavailable(t.missing);
      const limits = policy.limits ?? resolveSandboxLimits();
      const { inner, identity } = confinedArgv(t, euid, argv, policy, limits);
      return confinement(t, inner, identity, limits);
    },
    describe(policy) {
      const t = resolve(policy.workspace);
      if ('missing' in t) return `sandbox: bwrap UNAVAILABLE (${t.missing}) — shell commands will fail, never run unconfined; install bubblewrap or pass --sandbox off`;
      return describeBwrap(t, euid, policy);
    },
  };
}

export const BwrapConfig = z.strictObject({
  mode: z.enum(SANDBOX_MODES as [SandboxMode, ...SandboxMode[]]).default('workspace-write'),
  network: z.boolean().default(false),
  /** Every `.git` in the workspace (its own and nested ones) stays read-only to commands (and to the file tools) unless this is true. */
  gitWritable: z.boolean().default(false),
  limits: z.strictObject({ processes: z.int().min(16), memoryMb: z.int().min(64), tmpMb: z.int().min(1) }).partial().default({}),
});
export type BwrapConfig = z.infer<typeof BwrapConfig>;

/** The `bwrap` provider of the sandbox seam (the default): bridle's homes hidden, `.git` read-only unless allowed, limits filled. */
export const bwrapSandbox = defineProvider({
  seam: SANDBOX,
  name: 'bwrap',
  config: BwrapConfig,
  inject: [SESSION],
  create(c, services): SandboxService {
    const s = services.get(SESSION);
    const policy: SandboxPolicy = {
      mode: c.mode,
      workspace: s.cwd,
      network: c.network,
      protect: c.gitWritable ? [] : [path.join(s.cwd, '.git')],
      protectGit: !c.gitWritable,
      hide: [...new Set([s.bridleHome, path.join(homedir(), '.bridle')])],
      limits: resolveSandboxLimits(c.limits),
    };
    return { provider: createBwrapSandbox(), policy };
  },
});
