/**
 * Starting one process on this machine, unconfined: the launcher under the
 * `local` subprocess provider (a sandbox's confinement wraps its argv first).
 * Each command gets its own session and process group (`detached`) and a
 * marker variable, so its end, a timeout or an abort kills everything it
 * started, grandchildren included, even those that left the group
 * (call-processes.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { SubprocessResult } from '../../ports/subprocess.js';
import type { Launch } from '../../safety/sandbox.js';
import { CALL_MARKER, killCallProcesses, startOf } from './call-processes.js';
import { OutputCapture } from './capture.js';

/** Node's timers overflow past 2^31-1 ms and fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * After the command's processes are killed, how long its output pipes may
 * stay open: only a process that escaped every kill (it left the session and
 * rewrote its environment) still holds them, and the call does not wait for it.
 */
const STRAGGLER_GRACE_MS = 2000;

let calls = 0;

/** A call: its first process, the marker its descendants carry, when it started. */
interface Call {
  child: ChildProcess;
  marker: string;
  since?: number;
}

function killCall({ child, marker, since }: Call): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is already gone.
  }
  killCallProcesses(child.pid, marker, since);
}

/**
 * Contract: resolves for every command that started, whatever its outcome;
 * rejects only when it could not be spawned (ENOENT for the program or cwd,
 * EACCES). A signal already aborted resolves at once without spawning
 * (`exitCode` and `signal` both null). When the command's main process exits,
 * everything else it started is killed (its group, its session, whatever
 * carries its marker): nothing it started outlives it, and the result does
 * not wait on output pipes held open past that. `env` is the whole
 * environment (plus the marker); `uid`/`gid` run it as another user (bridle
 * must be root).
 */
export function spawnProcess(request: Launch): Promise<SubprocessResult> {
  return new Promise<SubprocessResult>((resolve, reject) => {
    if (request.signal.aborted) {
      resolve({ exitCode: null, signal: null, stdout: '', stderr: '', timedOut: false, truncatedBytes: 0 });
      return;
    }
    const [program, ...args] = request.argv;
    if (program === undefined) {
      reject(new Error('the argv to launch is empty'));
      return;
    }
    const marker = `${process.pid}-${++calls}`;
    let child: ChildProcess;
    try {
      child = spawn(program, args, {
        cwd: request.cwd,
        env: { ...request.env, [CALL_MARKER]: marker },
        ...(request.uid !== undefined ? { uid: request.uid } : {}),
        ...(request.gid !== undefined ? { gid: request.gid } : {}),
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      reject(err);
      return;
    }

    const call: Call = { child, marker };
    const capture = new OutputCapture(request.maxOutputBytes);
    child.stdout!.on('data', (chunk: Buffer) => capture.push('stdout', chunk));
    child.stderr!.on('data', (chunk: Buffer) => capture.push('stderr', chunk));

    let settled = false;
    let timedOut = false;
    const onTimeout = () => {
      timedOut = true;
      killCall(call);
    };
    const timer = setTimeout(onTimeout, Math.min(Math.max(0, request.timeoutMs), MAX_TIMER_MS));
    const onAbort = () => killCall(call);
    request.signal.addEventListener('abort', onAbort, { once: true });
    let straggler: NodeJS.Timeout | undefined;
    const settle = () => {
      settled = true;
      clearTimeout(timer);
      clearTimeout(straggler);
      request.signal.removeEventListener('abort', onAbort);
    };

    let spawned = false;
    child.once('spawn', () => {
      spawned = true;
      if (child.pid !== undefined) call.since = startOf(child.pid);
    });
    // After a successful spawn, 'close' still follows any 'error'; only a failed spawn rejects.
    child.once('error', (err) => {
      if (settled || spawned) return;
      settle();
      killCall(call);
      reject(err);
    });
    child.once('exit', () => {
      clearTimeout(timer);
      killCall(call);
      straggler = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, STRAGGLER_GRACE_MS);
    });
    child.once('close', (exitCode, signal) => {
      if (settled) return;
      settle();
      resolve({ exitCode, signal, timedOut, ...capture.finish() });
    });
  });
}
