import { describe, expect, it } from 'vitest';
import { resolveSandboxLimits } from '../../ports/sandbox.js';
import { limitHits } from './limit-hits.js';

const limits = resolveSandboxLimits({ processes: 64, memoryMb: 256, tmpMb: 8 });
const counters = (pidsRefused = 0, oomKills = 0) => ({ pidsRefused, oomKills });

describe('limitHits', () => {
  it('a cgroup says exactly: refused forks and OOM kills', () => {
    const hits = limitHits({ stderr: '', limits, enforced: { processes: 'cgroup', memory: 'cgroup', tmp: true }, counters: counters(3, 1) });
    expect(hits.map((h) => h.limit)).toEqual(['processes', 'memory']);
    expect(hits[0]!.message).toContain('allows 64 at once');
    expect(hits[1]!.message).toContain('allows 256 MiB');
    expect(limitHits({ stderr: 'bash: fork: retry: Resource temporarily unavailable', limits, enforced: { processes: 'cgroup', tmp: true }, counters: counters() })).toEqual([]);
  });

  it('under an rlimit, a refused fork is known by the messages of bash, dash and busybox', () => {
    for (const stderr of ['bash: fork: retry: Resource temporarily unavailable', 'bash: fork: Resource temporarily unavailable', 'sh: 1: Cannot fork', "ash: can't fork"]) {
      expect(limitHits({ stderr, limits, enforced: { processes: 'rlimit', tmp: true } }).map((h) => h.limit), stderr).toEqual(['processes']);
    }
    expect(limitHits({ stderr: 'read: Resource temporarily unavailable', limits, enforced: { processes: 'rlimit', tmp: true } })).toEqual([]);
  });

  it('a full /tmp shows as "No space left on device", only where /tmp has a size; an unenforced limit is never reported', () => {
    expect(limitHits({ stderr: 'head: error writing: No space left on device', limits, enforced: { tmp: true } }).map((h) => h.limit)).toEqual(['tmp']);
    expect(limitHits({ stderr: 'No space left on device', limits, enforced: { tmp: false } })).toEqual([]);
    expect(limitHits({ stderr: 'sh: 1: Cannot fork', limits, enforced: { tmp: false } })).toEqual([]);
  });
});
