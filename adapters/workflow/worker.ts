/**
 * The `worker` provider of the workflow seam: each script runs in a worker
 * thread of its own, so a script that loops, blocks or allocates does not
 * stall the session's event loop, and one that runs past `deadlineMs` is
 * terminated (a busy loop included). This is host-loop isolation, not a
 * security boundary: the script runs with this process's privileges (it
 * can reach `process`); it gets an empty environment (no API keys), no
 * `require`, and its console output is dropped rather than mixed into the
 * CLI's. Its `agent()` calls come back here and are answered by the host,
 * at most `concurrency` at once.
 */
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import { WORKFLOW } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import { WORKFLOW_CODES, type AgentAnswer, type AgentCall, type Json, type WorkflowOutcome, type WorkflowRequest, type WorkflowRunner } from '../../ports/workflow.js';
import { scriptRuntime } from './script-runtime.js';

export const WorkerConfig = z.strictObject({
  /** How long one script may run, its agents' time included. */
  deadlineMs: z.int().positive().default(600_000),
  /** Most `agent()` calls one script may make. */
  maxAgents: z.int().positive().max(1000).default(64),
  /** Most agents running at once; the rest wait their turn. */
  concurrency: z.int().positive().max(64).default(8),
  /** The worker's heap, in MiB. */
  memoryMb: z.int().min(16).max(8192).default(256),
  /** Longest result, in characters of its JSON text. */
  maxResultChars: z.int().positive().default(100_000),
});
export type WorkerConfig = z.infer<typeof WorkerConfig>;

/** What the worker evaluates: the runtime's own source, over the worker's port, with `require` and friends out of the script's reach. */
const SOURCE = `'use strict';
const { parentPort, workerData } = require('node:worker_threads');
for (const k of ['require', 'module', 'exports', '__filename', '__dirname']) { try { delete globalThis[k]; } catch {} }
(${scriptRuntime.toString()})(parentPort, workerData);
`;

export function createWorkerRunner(c: WorkerConfig): WorkflowRunner {
  return {
    run: (req: WorkflowRequest) =>
      new Promise<WorkflowOutcome>((resolve) => {
        let worker: Worker;
        try {
          worker = new Worker(SOURCE, {
            eval: true,
            workerData: { script: req.script, maxAgents: c.maxAgents, maxResultChars: c.maxResultChars },
            resourceLimits: { maxOldGenerationSizeMb: c.memoryMb },
            env: {},
            stdout: true,
            stderr: true,
          });
        } catch (err) {
          return resolve({ ok: false, category: 'fatal', code: WORKFLOW_CODES.crashed, message: `the worker could not start: ${(err as Error).message}` });
        }
        worker.stdout.resume();
        worker.stderr.resume();
        let settled = false;
        const finish = (o: WorkflowOutcome) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          req.signal.removeEventListener('abort', onAbort);
          void worker.terminate().then(() => resolve(o), () => resolve(o));
        };
        const timer = setTimeout(() => finish({ ok: false, category: 'fatal', code: WORKFLOW_CODES.deadline, message: `the script ran past its deadline of ${c.deadlineMs} ms and was stopped` }), c.deadlineMs);
        const onAbort = () => finish({ ok: false, category: 'fatal', code: WORKFLOW_CODES.aborted, message: 'the workflow was cancelled' });
        if (req.signal.aborted) return onAbort();
        req.signal.addEventListener('abort', onAbort, { once: true });

        let active = 0;
        const queue: { id: number; call: AgentCall }[] = [];
        const pump = () => {
          while (!settled && active < c.concurrency && queue.length > 0) {
            const { id, call } = queue.shift()!;
            active++;
            void req.agent(call).then((answer: AgentAnswer) => {
              active--;
              if (!settled) worker.postMessage({ type: 'agent-result', id, ...answer });
              pump();
            });
          }
        };
        worker.on('message', (m: { type?: string; id?: number; prompt?: string; options?: AgentCall['options']; ok?: boolean; json?: string; category?: string; code?: string; message?: string }) => {
          if (m.type === 'agent' && typeof m.id === 'number' && typeof m.prompt === 'string') {
            queue.push({ id: m.id, call: { prompt: m.prompt, options: m.options ?? {} } });
            return pump();
          }
          if (m.type !== 'done') return;
          if (m.ok) {
            try {
              return finish({ ok: true, value: JSON.parse(m.json ?? 'null') as Json });
            } catch {
              return finish({ ok: false, category: 'fatal', code: WORKFLOW_CODES.notSerializable, message: 'the result did not arrive as JSON' });
            }
          }
          finish({ ok: false, category: m.category === 'recoverable' ? 'recoverable' : 'fatal', code: String(m.code ?? WORKFLOW_CODES.thrown), message: String(m.message ?? '') });
        });
        worker.on('error', (err) => finish({ ok: false, category: 'fatal', code: WORKFLOW_CODES.crashed, message: `the worker failed: ${err.message}` }));
        worker.on('exit', (code) => finish({ ok: false, category: 'fatal', code: WORKFLOW_CODES.crashed, message: `the worker exited (code ${code}) before the script finished` }));
      }),
  };
}

export const workerWorkflow = defineProvider({
  seam: WORKFLOW,
  name: 'worker',
  config: WorkerConfig,
  create: (c) => createWorkerRunner(c),
});
