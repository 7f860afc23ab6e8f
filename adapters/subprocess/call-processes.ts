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

interface Stat {
  zombie: boolean;
  pgrp: number;
  session: number;
  /** Clock ticks after boot. */
  start: number;
}

/** From /proc/<pid>/stat, or undefined when it is gone. */
function statOf(pid: string | number): Stat | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // After "pid (comm) ": field 3 (state) on; pgrp is field 5, session 6, starttime 22 (comm may hold spaces and parentheses).
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { zombie: f[0] === 'Z', pgrp: Number(f[2]), session: Number(f[3]), start: Number(f[19]) };
}

/** When `pid` started (clock ticks after boot), to skip older processes later; undefined when it is gone. */
export function startOf(pid: number): number | undefined {
  return statOf(pid)?.start;
}

function carries(pid: string, needle: string): boolean {
  try {
    return `\0${readFileSync(`/proc/${pid}/environ`, 'latin1')}`.includes(needle);
  } catch {
    return false; // another user's, or gone
  }
}

/**
 * Contract: never throws; the pids (not this process) in `leader`'s group or
 * session, or whose environment holds `CALL_MARKER=marker`. Only processes
 * started at `since` (the leader's start) or later can carry the marker, so
 * older ones are not read.
 */
export function callProcesses(leader: number, marker: string, since = 0): number[] {
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
    const ids = statOf(name);
    if (!ids || ids.zombie) continue;
    if (ids.pgrp === leader || ids.session === leader || (ids.start >= since && carries(name, needle))) out.push(Number(name));
  }
  return out;
}

/**
 * SIGKILLs the call's processes, again until a sweep finds none (a process
 * may fork between the read and the kill). Contract: never throws.
 */
export function killCallProcesses(leader: number, marker: string, since = 0): void {
  for (let round = 0; round < 10; round++) {
    const pids = callProcesses(leader, marker, since);
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
