/**
 * Which sandbox limits a finished command ran into, worded for the model. A
 * cgroup counts refusals and OOM kills exactly; an rlimit leaves only the
 * error a program printed, so a refused fork is recognised by its message.
 */
import type { SandboxLimits } from '../../ports/sandbox.js';
import type { LimitHit } from '../../ports/subprocess.js';
import type { CgroupCounters } from './cgroup.js';

/** How each limit is enforced for a call; undefined: it is not. */
export interface Enforced {
  processes?: 'cgroup' | 'rlimit';
  memory?: 'cgroup';
  /** The private /tmp and /dev/shm have a size. */
  tmp: boolean;
}

/** bash ("fork: retry: Resource temporarily unavailable"), dash ("Cannot fork"), busybox/others ("can't fork"). */
const FORK_REFUSED = /\bfork: (retry: )?Resource temporarily unavailable|\bCannot fork\b|\bcan't fork\b/i;
const NO_SPACE = /No space left on device/;

/** Contract: pure. */
export function limitHits(o: { stderr: string; limits: SandboxLimits; enforced: Enforced; counters?: CgroupCounters }): LimitHit[] {
  const hits: LimitHit[] = [];
  const { limits, enforced, counters } = o;
  const refused = enforced.processes === 'cgroup' ? (counters?.pidsRefused ?? 0) > 0 : enforced.processes === 'rlimit' && FORK_REFUSED.test(o.stderr);
  if (refused) {
    hits.push({ limit: 'processes', message: `processes: the sandbox allows ${limits.processes} at once (setting sandboxLimits.processes), and starting another was refused; run fewer in parallel` });
  }
  const killed = counters?.oomKills ?? 0;
  if (enforced.memory === 'cgroup' && killed > 0) {
    hits.push({ limit: 'memory', message: `memory: the sandbox allows ${limits.memoryMb} MiB, /tmp and /dev/shm included (setting sandboxLimits.memoryMb); the kernel killed ${killed} process${killed === 1 ? '' : 'es'} of the command for going over it` });
  }
  if (enforced.tmp && NO_SPACE.test(o.stderr)) {
    hits.push({ limit: 'tmp', message: `tmp: a write failed with "No space left on device"; the private /tmp and /dev/shm hold ${limits.tmpMb} MiB each (setting sandboxLimits.tmpMb): put large files in the workspace` });
  }
  return hits;
}
