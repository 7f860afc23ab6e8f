/**
 * The `worker` provider of the workflow seam: each script runs in a QuickJS
 * VM (a WebAssembly JS engine, `quickjs-host.ts`) hosted by a worker thread
 * of its own. The VM is the security boundary: the script's only powers are
 * `agent`, `parallel`, `pipeline`, `fatal`, `recoverable`, a delay-only
 * `setTimeout`, and plain JavaScript — no `process`, no modules, no files,
 * no network, no environment. The VM's memory (all of it) is bounded by
 * `memoryMb`, its time by `deadlineMs` (an interrupt inside the VM, and this
 * thread's timer with `worker.terminate()` as the backstop). The worker
 * thread keeps a script that loops or allocates off the session's event
 * loop. Its `agent()` requests come back here, where the host's own count
 * (`agent-gate.ts`) holds `maxAgents` and `concurrency` whatever the worker
 * posts. ADR 0037.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import { WORKFLOW } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import { WORKFLOW_CODES, type Json, type WorkflowOutcome, type WorkflowRequest, type WorkflowRunner } from '../../ports/workflow.js';
import { createAgentGate } from './agent-gate.js';
import { GLUE, quickjsHost, type HostData, type WasmApi, type WasmModule } from './quickjs-host.js';
import { scriptRuntime } from './script-runtime.js';

export const WorkerConfig = z.strictObject({
  /** How long one script may run, its agents' time included. */
  deadlineMs: z.int().positive().default(600_000),
  /** Most `agent()` calls one script may make. */
  maxAgents: z.int().positive().max(1000).default(64),
  /** Most agents running at once; the rest wait their turn. */
  concurrency: z.int().positive().max(64).default(8),
  /** The script's whole memory (the VM's linear memory, ArrayBuffers included), in MiB; the engine itself starts at 16. */
  memoryMb: z.int().min(32).max(2048).default(256),
  /** Longest result, in characters of its JSON text. */
  maxResultChars: z.int().positive().default(100_000),
});
export type WorkerConfig = z.infer<typeof WorkerConfig>;

/** QuickJS's stack: small enough that QuickJS's own check fires before the engine's wasm frames exhaust the thread's native stack. */
const STACK_BYTES = 256 * 1024;
/** Starting a worker and instantiating the engine: tens of ms on an idle machine, far more on a loaded one. */
const STARTUP_MS = 30_000;

declare const WebAssembly: WasmApi;
const require = createRequire(import.meta.url);
const PATHS = { core: require.resolve('quickjs-emscripten-core'), variant: require.resolve('@jitl/quickjs-wasmfile-release-sync') };

/** The engine is compiled once per process; each worker instantiates the same Module with a memory of its own. */
let compiled: Promise<WasmModule> | undefined;
const engine = () => (compiled ??= WebAssembly.compile(readFileSync(join(dirname(PATHS.variant), 'emscripten-module.wasm'))));

/** What the worker evaluates: the VM host's own source, given the engine's packages by absolute path. */
const SOURCE = `'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const core = require(workerData.paths.core);
const variant = require(workerData.paths.variant).default;
(${quickjsHost.toString()})(parentPort, workerData.host, core, variant);
`;

const Done = z.union([
  z.object({ type: z.literal('done'), ok: z.literal(true), json: z.string() }),
  z.object({ type: z.literal('done'), ok: z.literal(false), category: z.string(), code: z.string(), message: z.string() }),
]);

const fatal = (code: string, message: string): WorkflowOutcome => ({ ok: false, category: 'fatal', code, message });

export function createWorkerRunner(c: WorkerConfig): WorkflowRunner {
  return {
    run: async (req: WorkflowRequest): Promise<WorkflowOutcome> => {
      let wasmModule: WasmModule;
      try {
        wasmModule = await engine();
      } catch (err) {
        compiled = undefined;
        return fatal(WORKFLOW_CODES.crashed, `the script engine could not load: ${(err as Error).message}`);
      }
      return new Promise<WorkflowOutcome>((resolve) => {
        if (req.signal.aborted) return resolve(fatal(WORKFLOW_CODES.aborted, 'the workflow was cancelled'));
        let worker: Worker;
        try {
          worker = startWorker(c, hostData(c, req, wasmModule));
        } catch (err) {
          return resolve(fatal(WORKFLOW_CODES.crashed, `the worker could not start: ${(err as Error).message}`));
        }
        supervise(c, req, worker, resolve);
      });
    },
  };
}

/** What the worker's VM host is given: the script, its limits, and the sources it evaluates inside the VM. */
const hostData = (c: WorkerConfig, req: WorkflowRequest, wasmModule: WasmModule): HostData => ({
  script: req.script,
  maxAgents: c.maxAgents,
  maxResultChars: c.maxResultChars,
  memoryBytes: c.memoryMb * 1024 * 1024,
  stackBytes: STACK_BYTES,
  deadlineMs: c.deadlineMs,
  runtimeSource: scriptRuntime.toString(),
  glueSource: GLUE,
  wasmModule,
});

/** Contract: throws when the thread cannot start. */
function startWorker(c: WorkerConfig, host: HostData): Worker {
  const worker = new Worker(SOURCE, {
    eval: true,
    workerData: { paths: PATHS, host },
    // The host side of the VM holds little: its messages and the copies of the strings it relays.
    resourceLimits: { maxOldGenerationSizeMb: Math.max(64, c.memoryMb) },
    env: {},
    stdout: true,
    stderr: true,
  });
  worker.stdout.resume();
  worker.stderr.resume();
  return worker;
}

/**
 * Watches one run's worker until its outcome: relays `agent()` through the gate, holds the start-up and the
 * script's deadlines, honours the cancel, and reads the worker's last word. Contract: `resolve` is called
 * once, after the worker is terminated.
 */
function supervise(c: WorkerConfig, req: WorkflowRequest, worker: Worker, resolve: (o: WorkflowOutcome) => void): void {
  let settled = false;
  const gate = createAgentGate(c, req.agent, (id, answer) => {
    if (!settled) worker.postMessage({ type: 'agent-result', id, ...answer });
  });
  const finish = (o: WorkflowOutcome) => {
    if (settled) return;
    settled = true;
    gate.stop();
    clearTimeout(timer);
    req.signal.removeEventListener('abort', onAbort);
    void worker.terminate().then(() => resolve(o), () => resolve(o));
  };
  // Until the VM is ready the clock is the start-up's; then the script's own deadline, the backstop of the VM's interrupt.
  let timer = setTimeout(() => finish(fatal(WORKFLOW_CODES.crashed, `the script runtime did not start within ${STARTUP_MS} ms`)), STARTUP_MS);
  const armDeadline = () => {
    clearTimeout(timer);
    timer = setTimeout(() => finish(fatal(WORKFLOW_CODES.deadline, `the script ran past its deadline of ${c.deadlineMs} ms and was stopped`)), c.deadlineMs);
  };
  const onAbort = () => finish(fatal(WORKFLOW_CODES.aborted, 'the workflow was cancelled'));
  req.signal.addEventListener('abort', onAbort, { once: true });

  worker.on('message', (m: { type?: unknown }) => {
    if (m?.type === 'agent') return gate.request(m);
    if (m?.type === 'ready') return armDeadline();
    const outcome = outcomeOf(c, m);
    if (outcome) finish(outcome);
  });
  worker.on('error', (err: Error & { code?: string }) =>
    finish(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? fatal(WORKFLOW_CODES.memory, `the script's host ran out of memory (${err.message})`) : fatal(WORKFLOW_CODES.crashed, `the worker failed: ${err.message}`)),
  );
  worker.on('exit', (code) => finish(fatal(WORKFLOW_CODES.crashed, `the worker exited (code ${code}) before the script finished`)));
}

/** The outcome a worker's `done` message says; `undefined` for any other message. */
function outcomeOf(c: WorkerConfig, m: unknown): WorkflowOutcome | undefined {
  const d = Done.safeParse(m);
  if (!d.success) return undefined;
  if (!d.data.ok) return { ok: false, category: d.data.category === 'recoverable' ? 'recoverable' : 'fatal', code: d.data.code, message: d.data.message };
  if (d.data.json.length > c.maxResultChars) return fatal(WORKFLOW_CODES.tooLarge, `the result is ${d.data.json.length} characters of JSON, more than ${c.maxResultChars}`);
  try {
    return { ok: true, value: JSON.parse(d.data.json) as Json };
  } catch {
    return fatal(WORKFLOW_CODES.notSerializable, 'the result did not arrive as JSON');
  }
}

export const workerWorkflow = defineProvider({
  seam: WORKFLOW,
  name: 'worker',
  config: WorkerConfig,
  create: (c) => createWorkerRunner(c),
});
