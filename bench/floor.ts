/**
 * The floor of a step (#26): bridle's own machines — session, turn, step, tool-call, spawned and invoked as bridle
 * spawns and invokes them — provided with effects that do nothing and complete at once, driven through the same turn
 * as the in-memory step bench (overhead.ts: a no-op call per step, then an answer). What a step costs here is what
 * XState costs for this design; what bridle's step costs over it (the log, the projection, the request, the hooks,
 * the policy, the tool's validation and execution, the feed) is bridle's share.
 *
 * Allocations are counted with `v8.GCProfiler` between two forced collections: every byte allocated is either freed
 * by one of the collections in between (their `usedHeapSize` before minus after) or still live at the end, so
 * allocated = Σ freed + (used at the end − used at the start). A sampling heap profile would only estimate it, and
 * `process.memoryUsage()` deltas miss whatever a scavenge freed mid-run. GC is forced through `--expose-gc` when the
 * process has it, else the flag is set at run time (`v8.setFlagsFromString`), which Node 20 allows.
 */
import { GCProfiler, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { assign, createActor, fromCallback, fromPromise, type InspectionEvent } from 'xstate';
import { responseChunks } from '../adapters/model/scripted.js';
import type { ModelRequest } from '../log/messages.js';
import { sessionMachine } from '../machines/session.machine.js';
import { stepMachine, type StepEvent } from '../machines/step.machine.js';
import { toolCallMachine, type ToolCallContext, type ToolCallEvent, type ToolOutcome } from '../machines/tool-call.machine.js';
import { turnMachine, type TurnOutput } from '../machines/turn.machine.js';
import type { PreStepDecision } from '../ports/hooks.js';
import type { Decision } from '../ports/approval.js';
import { runSteps } from './overhead.js';
import { median, repeat } from './stats.js';

/** The bench's model, as overhead.ts scripts it: a no-op call on every step but the last, which answers. */
const answer = (steps: number, i: number) => (i < steps - 1 ? { toolCalls: [{ name: 'noop', arguments: { n: i } }] } : { text: 'done' });
const request: ModelRequest = { model: 'floor', system: '', tools: [], messages: [] };
const nothing = () => undefined;

/** The session machine with every action a no-op and every actor one that completes at once (a microtask). */
function floorMachine(steps: number) {
  const flushLog = fromPromise<void, void>(async () => undefined);
  const toolCall = toolCallMachine.provide({
    actions: {
      record: nothing,
      validateCall: assign<ToolCallContext, ToolCallEvent, { name: string; arguments: string }, ToolCallEvent, never>({
        validation: () => ({ ok: true, readOnly: true, idempotent: true, args: {} }),
      }),
    },
    guards: { isLogDurable: () => true },
    actors: {
      flushLog,
      decideCall: fromPromise<Decision, ToolCallContext>(async () => ({ kind: 'allow' })),
      executeTool: fromPromise<ToolOutcome, ToolCallContext>(async () => ({ status: 'ok', content: 'ok' })),
    },
  });
  let index = 0;
  const step = stepMachine.provide({
    actions: { record: nothing, prepareRequest: ({ self }) => self.send({ type: 'step.request.prepared', request }) },
    actors: {
      toolCall,
      // The same chunks the scripted model streams (deltas: 1), sent in one microtask.
      streamModel: fromCallback<StepEvent, { request: ModelRequest; step: string; attempt: number }>(({ sendBack }) => {
        const chunks = responseChunks(answer(steps, index), index++, 1);
        queueMicrotask(() => {
          for (const chunk of chunks) sendBack({ type: 'model.chunk.received', chunk });
        });
      }),
    },
  });
  const turn = turnMachine.provide({
    actions: { record: nothing },
    actors: {
      step,
      flushLog,
      runPreStep: fromPromise<PreStepDecision, { turn: string; text: string }>(async ({ input }) => ({ kind: 'enter', text: input.text })),
    },
  });
  return sessionMachine.provide({ actors: { turn } });
}

/** Runs one floor turn of `steps` steps; returns microseconds per step. `inspect`: for the test that its tree is bridle's. */
export async function runFloorSteps(steps: number, inspect?: (e: InspectionEvent) => void): Promise<number> {
  const actor = createActor(floorMachine(steps), { input: { maxSteps: steps + 1 }, ...(inspect ? { inspect } : {}) });
  const done = new Promise<TurnOutput>((resolve, reject) => {
    const sub = actor.subscribe({
      next: (s) => {
        if (s.matches('idle') && s.context.last) (sub.unsubscribe(), resolve(s.context.last));
      },
      error: reject,
    });
  });
  actor.start();
  const start = process.hrtime.bigint();
  actor.send({ type: 'session.input.received', seq: 1, text: 'go', mode: 'followup' });
  const out = await done;
  const ns = Number(process.hrtime.bigint() - start);
  actor.stop();
  if (out.steps !== steps || out.reason !== 'completed') throw new Error(`floor turn ended ${out.reason} after ${out.steps} steps`);
  return ns / 1000 / steps;
}

function forcedGc(): () => void {
  const own = (globalThis as { gc?: () => void }).gc;
  if (own) return own;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Bytes allocated per step by `run(steps)`, counted between two forced collections (see the header). */
export async function bytesPerStep(run: (steps: number) => Promise<unknown>, steps: number): Promise<number> {
  const gc = forcedGc();
  gc();
  const profiler = new GCProfiler();
  const before = getHeapStatistics().used_heap_size;
  profiler.start();
  await run(steps);
  gc();
  const stats = profiler.stop().statistics;
  let freed = 0;
  for (const s of stats) freed += s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize;
  const after = stats.at(-1)?.afterGC.heapStatistics.usedHeapSize ?? getHeapStatistics().used_heap_size;
  return (freed + after - before) / steps;
}

export interface FloorFigures {
  steps: number;
  floorUsPerStep: number;
  bridleUsPerStep: number;
  /** bridle's step over its floor, in wall time (the target: within 1.5×). */
  ratio: number;
  /** The same in the process's CPU time (user + system, GC threads included): what a loaded machine disturbs least. */
  floorCpuUsPerStep: number;
  bridleCpuUsPerStep: number;
  cpuRatio: number;
  floorKbPerStep: number;
  bridleKbPerStep: number;
}

/** Wall and CPU microseconds per step of one run. */
async function timed(run: () => Promise<number>, steps: number): Promise<{ wall: number; cpu: number }> {
  const cpu = process.cpuUsage();
  const wall = await run();
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / steps };
}

/**
 * Medians of 5 timed runs each, after a warm-up as run.ts does; the floor's and bridle's runs alternate, so a burst of
 * load on a shared machine falls on both alike. One counted run each for allocations.
 */
export async function floorFigures(steps = 2000): Promise<FloorFigures> {
  const floor = () => runFloorSteps(steps);
  const bridle = () => runSteps(steps, 'memory');
  for (let i = 0; i < 3; i++) (await floor(), await bridle());
  const f: { wall: number; cpu: number }[] = [];
  const b: { wall: number; cpu: number }[] = [];
  for (let i = 0; i < 5; i++) (f.push(await timed(floor, steps)), b.push(await timed(bridle, steps)));
  const floorUs = median(f.map((x) => x.wall));
  const bridleUs = median(b.map((x) => x.wall));
  const floorCpu = median(f.map((x) => x.cpu));
  const bridleCpu = median(b.map((x) => x.cpu));
  const floorKb = (await bytesPerStep(runFloorSteps, steps)) / 1024;
  const bridleKb = (await bytesPerStep((n) => runSteps(n, 'memory'), steps)) / 1024;
  return {
    steps,
    floorUsPerStep: floorUs,
    bridleUsPerStep: bridleUs,
    ratio: bridleUs / floorUs,
    floorCpuUsPerStep: floorCpu,
    bridleCpuUsPerStep: bridleCpu,
    cpuRatio: bridleCpu / floorCpu,
    floorKbPerStep: floorKb,
    bridleKbPerStep: bridleKb,
  };
}

const fmt = (n: number, d = 1) => n.toFixed(d);

/** The bench output's rows for the floor. */
export function floorLines(f: FloorFigures): string[] {
  return [
    `step floor (bridle's machines, no-op effects), ${f.steps} steps: median ${fmt(f.floorUsPerStep)} µs/step (CPU ${fmt(f.floorCpuUsPerStep)} µs), ${fmt(f.floorKbPerStep)} KB/step allocated`,
    `  bridle's step, memory store: median ${fmt(f.bridleUsPerStep)} µs/step (CPU ${fmt(f.bridleCpuUsPerStep)} µs), ${fmt(f.bridleKbPerStep)} KB/step allocated`,
    `  bridle over its floor (target ≤ 1.5×): ${fmt(f.ratio, 2)}× wall, ${fmt(f.cpuRatio, 2)}× CPU; bridle's share ${fmt(f.bridleCpuUsPerStep - f.floorCpuUsPerStep)} CPU µs and ${fmt(f.bridleKbPerStep - f.floorKbPerStep)} KB a step`,
  ];
}

// `node dist/bench/floor.js`: these rows alone.
if (import.meta.url === `file://${process.argv[1]}`) for (const line of floorLines(await floorFigures())) process.stdout.write(`${line}\n`);
