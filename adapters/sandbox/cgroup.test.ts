import { describe, expect, it } from 'vitest';
import { cgroupDirs, counterOf } from './cgroup.js';

const V1_CGROUP = ['9:name=systemd:/', '8:pids:/', '4:memory:/process_api/abc', '0::/'].join('\n');
const V1_MOUNTS = [
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids',
  '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n');

describe('cgroupDirs', () => {
  it('cgroup v1: one hierarchy per controller, each at the path /proc/self/cgroup names', () => {
    expect(cgroupDirs(V1_CGROUP, V1_MOUNTS)).toEqual({
      pids: { dir: '/sys/fs/cgroup/pids', version: 1 },
      memory: { dir: '/sys/fs/cgroup/memory/process_api/abc', version: 1 },
    });
  });

  it('a mount of a sub-tree (a container with a cgroup namespace) maps the path below its root', () => {
    const mounts = '35 31 0:32 /docker/x /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids';
    expect(cgroupDirs('8:pids:/docker/x/job', mounts)).toEqual({ pids: { dir: '/sys/fs/cgroup/pids/job', version: 1 } });
    // A cgroup outside what is mounted here cannot be reached.
    expect(cgroupDirs('8:pids:/elsewhere', mounts)).toEqual({});
  });

  it('cgroup v2: only controllers enabled for the children of bridle’s cgroup (its subtree_control, unreadable here: none)', () => {
    expect(cgroupDirs('0::/user.slice/no-such-cgroup', '30 23 0:26 / /nonexistent/cgroup rw - cgroup2 cgroup2 rw')).toEqual({});
  });
});

describe('counterOf', () => {
  it('reads one key of a flat keyed file, 0 when absent', () => {
    expect(counterOf('max 6\n', 'max')).toBe(6);
    expect(counterOf('oom_kill_disable 0\nunder_oom 0\noom_kill 3\n', 'oom_kill')).toBe(3);
    expect(counterOf('low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n', 'oom_kill')).toBe(1);
    expect(counterOf('', 'max')).toBe(0);
  });
});
