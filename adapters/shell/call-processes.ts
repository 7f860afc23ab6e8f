/**
 * Finds every process a call started, to end them with it. A process-group
 * kill misses what leaves the group: a job-control shell (`set -m`) gives
 * each background job a group of its own, and `setsid` a session of its own.
 * So a call's processes are those in its session or group (the call's first
 * process leads both) and those that carry the call's marker variable, which
 * every descendant inherits unless it rewrites its environment.
 *
 * Linux only (/proc); elsewhere only the group kill remains.
 */
import { readdirSync, readFileSync } from 'node:fs';

export const CALL_MARKER = 'BRIDLE_CALL';

/** `pid`'s process group and session from /proc/<pid>/stat, or undefined when it is gone. */
function groupAndSession(pid: string): { zombie: boolean; pgrp: number; session: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // After "pid (comm) ": state ppid pgrp session ... (comm may hold spaces and parentheses).
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { zombie: f[0] === 'Z', pgrp: Number(f[2]), session: Number(f[3]) };
}

function carries(pid: string, needle: string): boolean {
  try {
    return `\0${readFileSync(`/proc/${pid}/environ`, 'latin1')}`.includes(needle);
  } catch {
    return false; // another user's, or gone
  }
}

/** Contract: never throws; the pids (not this process) in `leader`'s group or session, or whose environment holds `CALL_MARKER=marker`. */
export function callProcesses(leader: number, marker: string): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const needle = `\0${CALL_MARKER}=${marker}\0`;
  const out: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const ids = groupAndSession(name);
    if (!ids || ids.zombie) continue;
    if (ids.pgrp === leader || ids.session === leader || carries(name, needle)) out.push(Number(name));
  }
  return out;
}

/**
 * SIGKILLs the call's processes, again until a sweep finds none (a process
 * may fork between the read and the kill). Contract: never throws.
 */
export function killCallProcesses(leader: number, marker: string): void {
  for (let round = 0; round < 10; round++) {
    const pids = callProcesses(leader, marker);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already, or not ours to kill.
      }
    }
  }
}
