/**
 * A cgroup per confined command, where this host lets bridle make one: the
 * only limit on processes that holds for root (the kernel never applies
 * RLIMIT_NPROC to uid 0), and the only limit on memory that counts a
 * command's children and its tmpfs pages together. Used for both cgroup v1
 * (a hierarchy per controller) and v2 (one tree, where the controller must be
 * enabled for bridle's own cgroup's children). Where no cgroup can be made
 * (not root, a read-only /sys/fs/cgroup), `findCgroupParents` says why and
 * the sandbox says what it cannot limit.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export type Controller = 'pids' | 'memory';

export interface CgroupParent {
  /** The directory new cgroups are made in: bridle's own cgroup for this controller. */
  dir: string;
  version: 1 | 2;
}

export type CgroupParents = Partial<Record<Controller, CgroupParent>> & { why?: string };

/** What one call's cgroups counted. */
export interface CgroupCounters {
  /** Forks refused at `pids.max`. */
  pidsRefused: number;
  /** Processes the kernel's OOM killer ended at the memory limit. */
  oomKills: number;
}

export interface CallCgroup {
  /** The `cgroup.procs` files a process writes its pid to, to join, before it runs anything. */
  procs: string[];
  counters(): CgroupCounters;
  /** Kills what is left in it and removes it. Contract: never rejects. */
  dispose(): Promise<void>;
}

const LIMIT_FILE: Record<Controller, Record<1 | 2, string>> = {
  pids: { 1: 'pids.max', 2: 'pids.max' },
  memory: { 1: 'memory.limit_in_bytes', 2: 'memory.max' },
};

const read = (file: string): string => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};

/** `key N` lines (pids.events, memory.events, memory.oom_control): the number for `key`, 0 when absent. */
export function counterOf(text: string, key: string): number {
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/**
 * Contract: pure; where each controller's cgroup of this process lives, from
 * the texts of /proc/self/cgroup and /proc/self/mountinfo.
 */
export function cgroupDirs(procCgroup: string, mountinfo: string): Partial<Record<Controller, CgroupParent>> {
  const mounts = mountinfo
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [pre, post] = line.split(' - ');
      const f = (pre ?? '').split(' ');
      const g = (post ?? '').split(' ');
      return { root: f[3] ?? '', point: (f[4] ?? '').replace(/\\040/g, ' '), type: g[0] ?? '', opts: (g[2] ?? '').split(',') };
    });
  const out: Partial<Record<Controller, CgroupParent>> = {};
  const within = (root: string, p: string) => (root === '/' ? p : p === root ? '/' : p.startsWith(`${root}/`) ? p.slice(root.length) : undefined);
  let unified: string | undefined;
  for (const line of procCgroup.split('\n').filter(Boolean)) {
    const [, list, p] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (list === undefined || p === undefined) continue;
    if (list === '') {
      unified = p;
      continue;
    }
    for (const c of ['pids', 'memory'] as const) {
      if (!list.split(',').includes(c)) continue;
      const m = mounts.find((x) => x.type === 'cgroup' && x.opts.includes(c) && within(x.root, p) !== undefined);
      if (m) out[c] = { dir: path.resolve(m.point, `.${within(m.root, p)!}`), version: 1 };
    }
  }
  if (unified !== undefined) {
    const m = mounts.find((x) => x.type === 'cgroup2' && within(x.root, unified!) !== undefined);
    if (m) {
      const dir = path.resolve(m.point, `.${within(m.root, unified)!}`);
      const enabled = read(path.join(dir, 'cgroup.subtree_control')).trim().split(/\s+/);
      for (const c of ['pids', 'memory'] as const) if (!out[c] && enabled.includes(c)) out[c] = { dir, version: 2 };
    }
  }
  return out;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Removes the empty cgroups an earlier bridle left when it died mid-command. */
function sweepStale(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^bridle-(\d+)-\d+$/.exec(name);
    if (!m || alive(Number(m[1]))) continue;
    try {
      rmdirSync(path.join(dir, name));
    } catch {
      // Not empty or not ours to remove: leave it.
    }
  }
}

let seq = 0;
const newName = () => `bridle-${process.pid}-${++seq}`;

/**
 * Whether bridle can make a cgroup with each controller here: tries one and
 * removes it. Contract: never throws.
 */
export function findCgroupParents(): CgroupParents {
  const dirs = cgroupDirs(read('/proc/self/cgroup'), read('/proc/self/mountinfo'));
  const out: CgroupParents = {};
  const why: string[] = [];
  for (const c of ['pids', 'memory'] as const) {
    const parent = dirs[c];
    if (!parent) {
      why.push(`no ${c} controller for bridle's cgroup`);
      continue;
    }
    sweepStale(parent.dir);
    const probe = path.join(parent.dir, newName());
    try {
      mkdirSync(probe);
      try {
        if (!existsSync(path.join(probe, LIMIT_FILE[c][parent.version]))) throw new Error(`no ${LIMIT_FILE[c][parent.version]}`);
        out[c] = parent;
      } finally {
        rmdirSync(probe);
      }
    } catch (err) {
      why.push(`cannot make a ${c} cgroup in ${parent.dir} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  if (why.length > 0) out.why = why.join('; ');
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Makes the cgroups for one call, limits written. Throws when it cannot (the
 * caller fails the call closed: a command must not run without the limits
 * the sandbox promised).
 */
export function createCallCgroup(parents: CgroupParents, limits: { processes: number; memoryBytes: number }): CallCgroup {
  const made = new Map<string, { dir: string; version: 1 | 2 }>();
  const cgroupFor = (p: CgroupParent) => {
    let m = made.get(p.dir);
    if (!m) {
      m = { dir: path.join(p.dir, newName()), version: p.version };
      mkdirSync(m.dir);
      made.set(p.dir, m);
    }
    return m;
  };
  const dispose = async () => {
    for (const { dir } of made.values()) {
      for (let i = 0; i < 100; i++) {
        for (const pid of read(path.join(dir, 'cgroup.procs')).split('\n').filter(Boolean)) {
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {
            // Already gone.
          }
        }
        try {
          rmdirSync(dir);
          break;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') break;
          await sleep(10); // EBUSY: its last processes are still exiting
        }
      }
    }
  };
  try {
    let pidsDir: string | undefined;
    let memory: { dir: string; version: 1 | 2 } | undefined;
    if (parents.pids) {
      const m = cgroupFor(parents.pids);
      writeFileSync(path.join(m.dir, 'pids.max'), String(limits.processes));
      pidsDir = m.dir;
    }
    if (parents.memory) {
      memory = cgroupFor(parents.memory);
      writeFileSync(path.join(memory.dir, LIMIT_FILE.memory[memory.version]), String(limits.memoryBytes));
      // No way around the limit through swap, where swap is accounted.
      const swap = memory.version === 1 ? ['memory.memsw.limit_in_bytes', String(limits.memoryBytes)] : ['memory.swap.max', '0'];
      if (existsSync(path.join(memory.dir, swap[0]!))) writeFileSync(path.join(memory.dir, swap[0]!), swap[1]!);
    }
    return {
      procs: [...made.values()].map((m) => path.join(m.dir, 'cgroup.procs')),
      counters: () => ({
        pidsRefused: pidsDir ? counterOf(read(path.join(pidsDir, 'pids.events')), 'max') : 0,
        oomKills: memory ? counterOf(read(path.join(memory.dir, memory.version === 1 ? 'memory.oom_control' : 'memory.events')), 'oom_kill') : 0,
      }),
      dispose: () => dispose().catch(() => {}),
    };
  } catch (err) {
    void dispose();
    throw err;
  }
}
