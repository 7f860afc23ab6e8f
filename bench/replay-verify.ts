/**
 * Replay + verify of a 100,000-entry log against plain `JSON.parse` of the
 * same lines (DESIGN §8: within 2×). The log is a real one: a scripted
 * session of many short turns on a memory store, its lines kept as written.
 */
import { createSession } from '../actors/session.js';
import { createScriptedProviderFromFunction } from '../adapters/model/scripted.js';
import { createMemoryStore } from '../adapters/store/memory.js';
import { parseLog } from '../log/parse.js';
import { verifyLog } from '../log/verify.js';
import { checkCheckpoints } from '../machines/session-fold.js';
import { noopTool } from './noop-tool.js';
import { median } from './stats.js';

/** A log of at least `entries` entries: turns of 20 steps, each step one no-op call. */
export async function makeLog(entries: number): Promise<string> {
  const store = createMemoryStore();
  let t = 0;
  const session = createSession({
    id: 'bench-log',
    cwd: '/nonexistent',
    bridleHome: '/nonexistent-home',
    model: createScriptedProviderFromFunction((_r, i) => (i % 20 === 19 ? { text: 'turn done' } : { toolCalls: [{ name: 'noop', arguments: { n: i } }] }), { deltas: 1 }),
    modelName: 'scripted-bench',
    store,
    clock: () => t++,
    tools: [noopTool],
    shell: { id: 'none', run: () => Promise.reject(new Error('no shell')) },
    approval: 'auto',
    repeatCall: false,
  });
  while (store.lines.length < entries) await session.run('again');
  await session.close();
  return store.text();
}

function time(f: () => void): number {
  const t = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

export async function bench(): Promise<{ label: string; value: Record<string, unknown> }> {
  const text = await makeLog(100_000);
  const lines = text.split('\n').filter(Boolean);
  const plain: number[] = [];
  const verify: number[] = [];
  const full: number[] = [];
  for (let i = 0; i < 5; i++) {
    plain.push(time(() => lines.map((l) => JSON.parse(l))));
    verify.push(time(() => verifyLog(parseLog(text).entries)));
    full.push(time(() => verifyLog(parseLog(text).entries, { checkpoints: checkCheckpoints })));
  }
  const p = median(plain);
  return {
    label: `replay + verify of a ${lines.length}-entry log (median of 5)`,
    value: {
      jsonParseMs: Math.round(p),
      parseAndVerifyMs: Math.round(median(verify)),
      withCheckpointFoldMs: Math.round(median(full)),
      ratio: +(median(verify) / p).toFixed(2),
      ratioWithCheckpointFold: +(median(full) / p).toFixed(2),
    },
  };
}
