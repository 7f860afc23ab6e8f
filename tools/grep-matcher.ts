/**
 * grep's regular expression runs on a worker thread. JavaScript regexps
 * backtrack: `^(a+)+$` against a line of forty `a`s and a `b` runs for hours,
 * and on the main thread no timer, no deadline and no other session gets a
 * turn meanwhile. A worker can be terminated mid-match, so the deadline holds
 * (ADR 0011).
 */
import { Worker } from 'node:worker_threads';

/**
 * The worker's whole program, as a string: `eval` workers need no file beside
 * the compiled module (vitest runs the sources, the CLI runs `dist/`). It gets
 * batches of file texts; for each file with matching lines it posts their
 * indexes as soon as that file is done (so a later file stuck in backtracking
 * loses nothing found before it), at most `budget` in all, then `done`.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const re = new RegExp(workerData.source);
parentPort.on('message', ({ texts, budget }) => {
  let left = budget;
  for (let f = 0; f < texts.length && left > 0; f++) {
    const lines = texts[f].split(/\\r?\\n/);
    if (lines[lines.length - 1] === '') lines.pop();
    const hits = [];
    for (let l = 0; l < lines.length && left > 0; l++) if (re.test(lines[l])) (hits.push(l), left--);
    if (hits.length > 0) parentPort.postMessage({ file: f, lines: hits });
  }
  parentPort.postMessage({ done: true });
});
`;

type WorkerMessage = { file: number; lines: number[] } | { done: true };

/** How a batch ended. Its hits were handed to `onHits` as they came. */
export type BatchEnd = { done: true } | { stopped: true } | { failed: string };

export interface LineMatcher {
  /**
   * Matches the lines of `texts` (each a whole file), calling `onHits` with
   * the 0-based indexes of a file's matching lines, file by file in order.
   *
   * Contract: never rejects. When `signal` fires first, the worker is
   * terminated (a match stuck in backtracking ends there) and the batch ends
   * `stopped`; a worker that dies ends it `failed`.
   */
  match(texts: string[], budget: number, signal: AbortSignal, onHits: (file: number, lines: number[]) => void): Promise<BatchEnd>;
  /** Terminates the worker if one was started. Contract: idempotent; never rejects. */
  close(): Promise<void>;
}

/** A matcher for `source` (already checked to compile); the worker starts on the first batch. */
export function createLineMatcher(source: string): LineMatcher {
  let worker: Worker | undefined;
  let dead: string | undefined;

  const stop = async () => {
    const w = worker;
    worker = undefined;
    dead ??= 'the matcher was stopped';
    await w?.terminate().catch(() => {});
  };

  return {
    match(texts, budget, signal, onHits) {
      if (signal.aborted) return stop().then(() => ({ stopped: true }));
      if (dead !== undefined) return Promise.resolve({ failed: dead });
      worker ??= new Worker(WORKER_SOURCE, { eval: true, workerData: { source } });
      const w = worker;
      return new Promise<BatchEnd>((resolve) => {
        const settle = (result: BatchEnd) => {
          w.off('message', onMessage).off('error', onError).off('exit', onExit);
          signal.removeEventListener('abort', onAbort);
          resolve(result);
        };
        const onMessage = (message: WorkerMessage) => {
          if ('done' in message) settle({ done: true });
          else onHits(message.file, message.lines);
        };
        const onError = (err: Error) => {
          dead = `the matcher failed: ${err.message}`;
          void stop();
          settle({ failed: dead });
        };
        const onExit = (code: number) => {
          dead ??= `the matcher exited (code ${code})`;
          worker = undefined;
          settle({ failed: dead });
        };
        const onAbort = () => {
          void stop();
          settle({ stopped: true });
        };
        w.on('message', onMessage).on('error', onError).on('exit', onExit);
        signal.addEventListener('abort', onAbort, { once: true });
        w.postMessage({ texts, budget });
      });
    },
    close: stop,
  };
}
