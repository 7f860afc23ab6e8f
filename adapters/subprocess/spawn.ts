/**
 * The `local` shell provider: runs an argv on this machine, unconfined.
 * Each command gets its own session and process group (`detached`) and a
 * marker variable, so its end, a timeout or an abort kills everything it
 * started, grandchildren included, even those that left the group
 * (call-processes.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Shell, ShellRequest, ShellResult } from '../../ports/tools.js';
import { CALL_MARKER, killCallProcesses, startOf } from './call-processes.js';

type StreamName = 'stdout' | 'stderr';

interface Captured {
  head: Buffer[];
  headBytes: number;
  tail: Buffer[];
  tailBytes: number;
  total: number;
}

/** Node's timers overflow past 2^31-1 ms and fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * After the command's processes are killed, how long its output pipes may
 * stay open: only a process that escaped every kill (it left the session and
 * rewrote its environment) still holds them, and the call does not wait for it.
 */
const STRAGGLER_GRACE_MS = 2000;

let calls = 0;

/**
 * Keeps at most `maxBytes` of stdout+stderr: the first half of the budget is
 * shared by both streams' heads in arrival order, the rest holds each
 * stream's latest bytes (the end of a log is where errors are). What falls in
 * between is counted and replaced by a note.
 */
export class OutputCapture {
  private headLeft: number;
  private readonly tailMax: number;
  private readonly streams: Record<StreamName, Captured> = {
    stdout: { head: [], headBytes: 0, tail: [], tailBytes: 0, total: 0 },
    stderr: { head: [], headBytes: 0, tail: [], tailBytes: 0, total: 0 },
  };

  constructor(private readonly maxBytes: number) {
    this.headLeft = Math.floor(Math.max(0, maxBytes) / 2);
    this.tailMax = Math.max(0, maxBytes) - this.headLeft;
  }

  push(name: StreamName, chunk: Buffer): void {
    const s = this.streams[name];
    s.total += chunk.length;
    const toHead = Math.min(this.headLeft, chunk.length);
    if (toHead > 0) {
      s.head.push(chunk.subarray(0, toHead));
      s.headBytes += toHead;
      this.headLeft -= toHead;
    }
    if (toHead === chunk.length) return;
    s.tail.push(chunk.subarray(toHead));
    s.tailBytes += chunk.length - toHead;
    while (s.tailBytes > this.tailMax) {
      const first = s.tail[0]!;
      const excess = s.tailBytes - this.tailMax;
      if (first.length <= excess) {
        s.tail.shift();
        s.tailBytes -= first.length;
      } else {
        s.tail[0] = first.subarray(excess);
        s.tailBytes -= excess;
      }
    }
  }

  finish(): { stdout: string; stderr: string; truncatedBytes: number } {
    const { stdout: out, stderr: err } = this.streams;
    // Both tails together must fit what the heads left; each gets half, and a short one lends the rest.
    const allowed = Math.max(0, this.maxBytes) - out.headBytes - err.headBytes;
    const half = Math.floor(allowed / 2);
    let outTail = Math.min(out.tailBytes, half);
    const errTail = Math.min(err.tailBytes, allowed - outTail);
    outTail = Math.min(out.tailBytes, allowed - errTail);
    const render = (s: Captured, keepTail: number) => {
      const tail = Buffer.concat(s.tail);
      const kept = tail.subarray(tail.length - keepTail);
      const dropped = s.total - s.headBytes - keepTail;
      const note = dropped > 0 ? `\n[... ${dropped} bytes cut ...]\n` : '';
      return { text: Buffer.concat(s.head).toString('utf8') + note + kept.toString('utf8'), dropped };
    };
    const o = render(out, outTail);
    const e = render(err, errTail);
    return { stdout: o.text, stderr: e.text, truncatedBytes: o.dropped + e.dropped };
  }
}

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
 * not wait on output pipes held open past that. `env`, when given, replaces the environment;
 * `uid`/`gid` run it as another user (bridle must be root).
 */
function run(request: ShellRequest): Promise<ShellResult> {
  return new Promise<ShellResult>((resolve, reject) => {
    if (request.signal.aborted) {
      resolve({ exitCode: null, signal: null, stdout: '', stderr: '', timedOut: false, truncatedBytes: 0 });
      return;
    }
    const [program, ...args] = request.argv;
    if (program === undefined) {
      reject(new Error('ShellRequest.argv is empty'));
      return;
    }
    const marker = `${process.pid}-${++calls}`;
    let child: ChildProcess;
    try {
      child = spawn(program, args, {
        cwd: request.cwd,
        env: { ...(request.env ?? process.env), [CALL_MARKER]: marker },
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

export function createLocalShell(): Shell {
  return { id: 'local', run };
}
