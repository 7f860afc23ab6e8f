/**
 * The worker thread live traces run in (ADR 0080): a `TraceBatcher` — projection, the official packages'
 * OTLP encoding and the HTTP export — off the thread the sessions step on. It takes hand-overs (their entries
 * as log lines, parsed here: ADR 0098), and answers
 * each flush (or shutdown) once what was taken before it has gone to the collector. It runs below the sessions'
 * thread's priority (`worker-priority.ts`, ADR 0106), so waking it at a hand-over does not take their core.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { handoverOfText, TraceBatcher, type HandoverText } from './live-batch.js';
import { yieldTheCore } from './worker-priority.js';

/** What the main thread sends. */
export type ToWorker = { kind: 'take'; h: HandoverText } | { kind: 'flush'; n: number } | { kind: 'shutdown'; n: number };
/** What the worker answers. */
export type FromWorker = { kind: 'warn'; line: string } | { kind: 'done'; n: number };
export interface WorkerSetup {
  endpoint: string | undefined;
  version: string;
  metricsEndpoint?: string;
}

const port = parentPort;
if (port) {
  yieldTheCore();
  const setup = workerData as WorkerSetup;
  const say = (m: FromWorker) => port.postMessage(m);
  const batcher = new TraceBatcher(setup.endpoint, {
    version: setup.version,
    env: process.env,
    warn: (line) => say({ kind: 'warn', line }),
    ...(setup.metricsEndpoint ? { metricsEndpoint: setup.metricsEndpoint } : {}),
  });
  port.on('message', (m: ToWorker) => {
    if (m.kind === 'take') batcher.take(handoverOfText(m.h));
    else if (m.kind === 'flush') void batcher.flush().then(() => say({ kind: 'done', n: m.n }));
    else
      void batcher.shutdown().then(() => {
        say({ kind: 'done', n: m.n });
        port.close();
      });
  });
}
