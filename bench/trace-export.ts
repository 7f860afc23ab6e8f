/**
 * `bridle trace` of a 100,000-entry log (issue #25): the CLI as a user runs
 * it (`trace <file> --json`, the process's start included), and inside it the
 * read, the projection to spans (`traceOf`) and the OTLP/JSON encoding.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { otlpJson, traceResource } from '../adapters/tracing/otlp.js';
import { readLogFile } from '../adapters/store/jsonl-read.js';
import { traceOf } from '../log/trace.js';
import { makeLog } from './replay-verify.js';
import { median } from './stats.js';

const CLI = fileURLToPath(new URL('../cli/main.js', import.meta.url));
const ms = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;

export async function bench(entries = 100_000): Promise<{ label: string; value: Record<string, unknown> }> {
  const dir = mkdtempSync(join(tmpdir(), 'bridle-bench-trace-'));
  const file = join(dir, 'bench.jsonl');
  // Most of the bench's time: a real session writes the log, about 1 ms an entry on a loaded machine.
  const t0 = process.hrtime.bigint();
  writeFileSync(file, await makeLog(entries));
  const makeLogMs = ms(t0);
  const read: number[] = [];
  const project: number[] = [];
  const encode: number[] = [];
  const cli: number[] = [];
  let spans = 0;
  for (let i = 0; i < 3; i++) {
    let t = process.hrtime.bigint();
    const r = readLogFile(file);
    if (!r.ok) throw new Error(`bench log does not read back: ${r.violations[0]?.message}`);
    read.push(ms(t));
    t = process.hrtime.bigint();
    const s = traceOf(r.entries);
    project.push(ms(t));
    spans = s.length;
    t = process.hrtime.bigint();
    await otlpJson(s, traceResource('bench'));
    encode.push(ms(t));
    t = process.hrtime.bigint();
    const run = spawnSync(process.execPath, [CLI, 'trace', file, '--json'], { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH, HOME: dir }, maxBuffer: 1 << 30 });
    if (run.status !== 0) throw new Error(`bridle trace failed: ${run.stderr}`);
    cli.push(ms(t));
  }
  rmSync(dir, { recursive: true, force: true });
  return {
    label: `bridle trace --json of a ${entries.toLocaleString('en-US')}-entry log (${spans} spans; median of 3)`,
    value: { cliMs: Math.round(median(cli)), readMs: Math.round(median(read)), projectMs: Math.round(median(project)), encodeMs: Math.round(median(encode)), makeLogMs: Math.round(makeLogMs) },
  };
}

// Run alone (`node dist/bench/trace-export.js`; `BRIDLE_BENCH_ENTRIES` for another size), it prints its figures; `npm run bench` imports it.
if (process.argv[1]?.endsWith('trace-export.js')) {
  const r = await bench(Number(process.env.BRIDLE_BENCH_ENTRIES ?? 100_000));
  console.log(`${r.label}: ${JSON.stringify(r.value)}`);
}
