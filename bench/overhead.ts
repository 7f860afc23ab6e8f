/**
 * Harness overhead per step: a scripted model that calls a no-op tool N-1
 * times and then answers, a memory store (or a JSONL file), a stepping clock.
 * What is left is the cost of the machines, the log and the projection.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noopTool } from './noop-tool.js';
import { createSession } from '../runtime/session.js';
import { createScriptedProviderFromFunction } from '../adapters/model/scripted.js';
import { createJsonlStore } from '../adapters/store/jsonl.js';
import { createMemoryStore } from '../adapters/store/memory.js';
import { createMemorySubprocess } from '../adapters/subprocess/memory.js';

/** Runs one turn of `steps` steps; returns microseconds per step. */
export async function runSteps(steps: number, store: 'memory' | 'jsonl'): Promise<number> {
  const dir = store === 'jsonl' ? mkdtempSync(join(tmpdir(), 'bridle-bench-')) : undefined;
  let t = 0;
  const session = createSession({
    id: 'bench',
    cwd: '/nonexistent',
    bridleHome: '/nonexistent-home',
    model: createScriptedProviderFromFunction((_r, i) => (i < steps - 1 ? { toolCalls: [{ name: 'noop', arguments: { n: i } }] } : { text: 'done' }), { deltas: 1 }),
    modelName: 'scripted-bench',
    store: dir ? createJsonlStore(join(dir, 'bench.jsonl')) : createMemoryStore(),
    clock: () => t++,
    tools: [noopTool],
    subprocess: createMemorySubprocess(),
    approval: 'auto',
    maxSteps: steps + 1,
  });
  const start = process.hrtime.bigint();
  const out = await session.run('go');
  const ns = Number(process.hrtime.bigint() - start);
  await session.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (out.steps !== steps || out.reason !== 'completed') throw new Error(`bench turn ended ${out.reason} after ${out.steps} steps`);
  return ns / 1000 / steps;
}
