/** `npm run bench`: every target of docs/design.md §8 that has a benchmark, medians and ratios from this one run. */
import { coldStartMs, commandStarts } from './cold-start.js';
import { floorFigures, floorLines } from './floor.js';
import { fsyncsPerStep, runSteps } from './overhead.js';
import { median, repeat } from './stats.js';

const fmt = (n: number, d = 1) => n.toFixed(d);

async function main() {
  const json = process.argv.includes('--json');
  const rows: Record<string, unknown> = {};
  const say = (line: string) => {
    if (!json) process.stdout.write(`${line}\n`);
  };
  say(`node ${process.version}, ${new Date().toISOString()}`);

  // Warm-up: V8 needs a few thousand steps to finish tiering up the hot paths; without it the 100-step figure
  // measures the JIT, not the harness (ADR 0007), and "flatness" says nothing.
  for (let i = 0; i < 3; i++) await runSteps(2000, 'memory');
  const per: Record<number, number> = {};
  for (const n of [100, 2000, 10000]) {
    per[n] = median(await repeat(n >= 10000 ? 3 : 5, () => runSteps(n, 'memory')));
    say(`harness overhead, memory store, ${n} steps: median ${fmt(per[n]!)} µs/step`);
  }
  rows.overheadUsPerStep = per;
  rows.flatness = per[10000]! / per[100]!;
  say(`  flatness (10,000 vs 100 steps): ${fmt(rows.flatness as number, 2)}×`);
  // The same turn through bridle's own machines with no-op effects: how much of a step is XState's and how much bridle's (#26).
  const floor = await floorFigures(2000);
  rows.stepFloor = floor;
  for (const line of floorLines(floor)) say(line);
  const durable = median(await repeat(3, () => runSteps(2000, 'jsonl')));
  rows.durableUsPerStep = durable;
  say(`harness overhead, JSONL store, a read-only call a step (flushed only at turn end, ADR 0072), 2000 steps: median ${fmt(durable)} µs/step`);
  const once = median(await repeat(3, () => runSteps(2000, 'jsonl', 1, 'noop_once')));
  rows.durableUsPerStepNonIdempotent = once;
  say(`  the same, a call that may not run twice (fsync at its dispatch and its result), 2000 steps: median ${fmt(once)} µs/step`);
  const paired = median(await repeat(3, () => runSteps(1000, 'jsonl', 2, 'noop_read_once')));
  rows.durableUsPerStepTwoCalls = paired;
  say(`  the same, two read-only calls that may not run twice, released together per step (they share their fsyncs), 1000 steps: median ${fmt(paired)} µs/step`);
  const syncs: Record<string, number> = {};
  for (const c of [1, 2, 4]) syncs[`readOnly${c}`] = await fsyncsPerStep(c);
  for (const c of [1, 2, 4]) syncs[`nonIdempotent${c}`] = await fsyncsPerStep(c, 200, 'noop_read_once');
  rows.fdatasyncsPerStep = syncs;
  say(`  fdatasyncs per step with 1 / 2 / 4 calls released together: read-only ${[1, 2, 4].map((c) => fmt(syncs[`readOnly${c}`]!, 2)).join(' / ')}; non-idempotent ${[1, 2, 4].map((c) => fmt(syncs[`nonIdempotent${c}`]!, 2)).join(' / ')}`);

  const cold = median(await repeat(15, coldStartMs));
  rows.coldStartMs = cold;
  say(`CLI cold start (bridle --version): median ${fmt(cold)} ms over 15 runs`);
  // Each command loads what its action needs (ADR 0099): the starts users and the e2e suite make most, one by one.
  const starts = commandStarts(10);
  rows.cliCommandStarts = Object.fromEntries(starts.map((c) => [c.command, { medianMs: c.medianMs, modules: c.modules, nodeModules: c.nodeModules }]));
  for (const c of starts) say(`  bridle ${c.command}: median ${fmt(c.medianMs, 0)} ms over 10 runs, ${c.modules} ES modules loaded (${c.nodeModules} from node_modules)`);

  for (const extra of ['./replay-verify.js', './fanout.js', './compaction.js', './cache-share.js', './wire-steps.js', './live-traces.js', './trace-export.js', './postgres.js', './group-commit.js']) {
    try {
      const mod = (await import(extra)) as { bench?: () => Promise<{ label: string; value: Record<string, unknown> }> };
      if (!mod.bench) continue;
      const r = await mod.bench();
      rows[r.label] = r.value;
      say(`${r.label}: ${JSON.stringify(r.value)}`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    }
  }
  if (json) process.stdout.write(`${JSON.stringify(rows)}\n`);
}

await main();
