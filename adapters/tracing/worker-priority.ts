/**
 * The export thread yields the core to the sessions' (ADR 0106). On a machine with no core to spare, each
 * hand-over's `postMessage` wakes the export worker, and the scheduler gave the woken worker the core the sessions
 * step on: the session's thread waited out the worker's projection and encoding of the turn. Ten steps of nice
 * below the thread that started it, the worker runs when a core is free (or the sessions' thread waits: a model,
 * the exit's flush) and no longer takes one from a session. Linux only, where a thread's nice is its own
 * (`setpriority` of 0 is the calling thread); elsewhere it is the whole process's, so nothing is changed.
 */
import { getPriority, setPriority } from 'node:os';

export const WORKER_NICE = 10;

/** Contract: never throws; lowers the calling thread's priority on Linux only. */
export function yieldTheCore(platform: NodeJS.Platform = process.platform): void {
  if (platform !== 'linux') return;
  try {
    setPriority(Math.min(19, getPriority() + WORKER_NICE));
  } catch {
    // A priority that cannot be changed leaves the export as it was.
  }
}
