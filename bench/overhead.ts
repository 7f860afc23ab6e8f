/**
 * Harness overhead per step: a scripted model that calls a no-op tool N-1
 * times and then answers, a memory store (or a JSONL file), a stepping clock.
 * What is left is the cost of the machines, the log and the projection.
 */
import * as nodeFs from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createJsonlStore, type JsonlFs } from '../adapters/store/jsonl.js';
import { noopOnceTool, noopReadOnceTool, noopTool } from './noop-tool.js';

/** `noop`: read-only, idempotent; `noop_once`: may not run twice; `noop_read_once`: the same, but released with its read-only neighbours. */
export type BenchTool = 'noop' | 'noop_once' | 'noop_read_once';
const toolsFor = (tool: BenchTool) => (tool === 'noop' ? {} : { tools: [noopTool, noopOnceTool, noopReadOnceTool] });
import { benchSession } from './session.js';

/** Runs one turn of `steps` steps, each of `calls` no-op calls released together; returns microseconds per step. `tool` `noop_once`: calls that may not run twice. */
export async function runSteps(steps: number, store: 'memory' | 'jsonl', calls = 1, tool: BenchTool = 'noop'): Promise<number> {
  const dir = store === 'jsonl' ? mkdtempSync(join(tmpdir(), 'bridle-bench-')) : undefined;
  const session = benchSession({
    id: 'bench',
    respond: (_r, i) => (i < steps - 1 ? { toolCalls: Array.from({ length: calls }, (_, c) => ({ name: tool, arguments: { n: i * calls + c } })) } : { text: 'done' }),
    maxSteps: steps + 1,
    ...(dir ? { dir } : {}),
    ...toolsFor(tool),
  });
  const start = process.hrtime.bigint();
  const out = await session.run('go');
  const ns = Number(process.hrtime.bigint() - start);
  await session.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (out.steps !== steps || out.reason !== 'completed') throw new Error(`bench turn ended ${out.reason} after ${out.steps} steps`);
  return ns / 1000 / steps;
}

/** The fdatasyncs a step of `calls` no-op calls released together costs on the JSONL store (group fsync, ADR 0028; ADR 0072 for `noop_once`). */
export async function fsyncsPerStep(calls: number, steps = 200, tool: BenchTool = 'noop'): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'bridle-bench-'));
  let syncs = 0;
  const fs: JsonlFs = { ...nodeFs, fdatasync: (fd, done) => (syncs++, nodeFs.fdatasync(fd, done)) };
  const session = benchSession({
    id: 'bench',
    respond: (_r, i) => (i < steps - 1 ? { toolCalls: Array.from({ length: calls }, (_, c) => ({ name: tool, arguments: { n: i * calls + c } })) } : { text: 'done' }),
    maxSteps: steps + 1,
    store: createJsonlStore(join(dir, 'bench.jsonl'), { fs }),
    ...toolsFor(tool),
  });
  await session.run('go');
  await session.close();
  rmSync(dir, { recursive: true, force: true });
  return syncs / steps;
}
