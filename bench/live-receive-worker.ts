/**
 * The live-traces bench's stand-in for the export worker (`adapters/tracing/live-worker.ts`): it takes the same
 * messages and answers each flush and shutdown at once, projecting, encoding and sending nothing. Traced with it,
 * a session pays the hand-over alone, and the other core is left free as it is untraced: the difference from the
 * real worker is what the export's own work costs the thread the sessions step on.
 */
import { parentPort } from 'node:worker_threads';
import type { FromWorker, ToWorker } from '../adapters/tracing/live-worker.js';
import { yieldTheCore } from '../adapters/tracing/worker-priority.js';

const port = parentPort;
if (port) {
  // At the export worker's priority, so that the two traced arms differ only in the work the worker does.
  yieldTheCore();
  port.on('message', (m: ToWorker) => {
    if (m.kind === 'take') return;
    port.postMessage({ kind: 'done', n: m.n } satisfies FromWorker);
    if (m.kind === 'shutdown') port.close();
  });
}
