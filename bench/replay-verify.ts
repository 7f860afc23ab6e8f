/**
 * Replay + verify of a 100,000-entry log against plain `JSON.parse` of the
 * same lines (docs/design.md §8: within 2×, streamed). The log is a real one: a
 * scripted session of many short turns on a memory store, its lines kept as
 * written to a file; replay reads that file the way `bridle replay` does,
 * line by line (no whole-file string), while the baseline parses lines
 * already split in memory.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryStore } from '../adapters/store/memory.js';
import { readLogFile } from '../adapters/store/jsonl-read.js';
import type { Entry } from '../log/entries.js';
import { verifyLog } from '../log/verify.js';
import { checkCheckpoints } from '../machines/session-fold.js';
import { benchSession } from './session.js';
import { median } from './stats.js';

/** A log of at least `entries` entries: turns of 20 steps, each step one no-op call. */
export async function makeLog(entries: number): Promise<string> {
  const store = createMemoryStore();
  const session = benchSession({
    id: 'bench-log',
    respond: (_r, i) => (i % 20 === 19 ? { text: 'turn done' } : { toolCalls: [{ name: 'noop', arguments: { n: i } }] }),
    store,
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
  const dir = mkdtempSync(join(tmpdir(), 'bridle-bench-'));
  const file = join(dir, 'bench.jsonl');
  writeFileSync(file, text);
  const read = (): Entry[] => {
    const r = readLogFile(file);
    if (!r.ok) throw new Error(`bench log does not read back: ${r.violations[0]?.message}`);
    return r.entries;
  };
  const plain: number[] = [];
  const verify: number[] = [];
  const full: number[] = [];
  for (let i = 0; i < 5; i++) {
    plain.push(time(() => lines.map((l) => JSON.parse(l))));
    verify.push(time(() => verifyLog(read())));
    full.push(time(() => verifyLog(read(), { checkpoints: checkCheckpoints })));
  }
  rmSync(dir, { recursive: true, force: true });
  const p = median(plain);
  return {
    label: `replay + verify of a ${lines.length}-entry log, streamed from its file (median of 5)`,
    value: {
      jsonParseMs: Math.round(p),
      parseAndVerifyMs: Math.round(median(verify)),
      withCheckpointFoldMs: Math.round(median(full)),
      ratio: +(median(verify) / p).toFixed(2),
      ratioWithCheckpointFold: +(median(full) / p).toFixed(2),
    },
  };
}
