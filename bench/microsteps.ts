/**
 * Microsteps a step takes (#26): every transition XState takes — an event's, or an eventless (`always`) one's, each
 * a `@xstate.microstep` inspection event — counted per machine for a turn of no-op calls, bridle's and its floor's.
 * A step's figure is the difference between a turn of `n + 2` steps and one of `n`, halved: the turn's own opening
 * and ending cancel out, and what is left is what one more step with one call costs.
 */
import type { InspectionEvent } from 'xstate';
import { benchSession } from './session.js';
import { runFloorSteps } from './floor.js';

export type Microsteps = Record<string, number>;

/** An inspector counting microsteps by machine id (`session`, `turn`, `step`, `tool-call`, …), and in `total`. */
export function microstepCounter(): { counts: Microsteps; inspect: (e: InspectionEvent) => void } {
  const counts: Microsteps = { total: 0 };
  const inspect = (e: InspectionEvent) => {
    if (e.type !== '@xstate.microstep') return;
    const id = (e.snapshot as { machine?: { id?: string } }).machine?.id ?? '?';
    counts[id] = (counts[id] ?? 0) + 1;
    counts.total = counts.total! + 1;
  };
  return { counts, inspect };
}

/** Microsteps of one bridle turn of `steps` steps, a no-op call on each but the last, as the bench's. */
export async function bridleTurnMicrosteps(steps: number): Promise<Microsteps> {
  const c = microstepCounter();
  const session = benchSession({
    id: 'microsteps',
    respond: (_r, i) => (i < steps - 1 ? { toolCalls: [{ name: 'noop', arguments: { n: i } }] } : { text: 'done' }),
    maxSteps: steps + 1,
    inspect: c.inspect,
  });
  const out = await session.run('go');
  await session.close();
  if (out.steps !== steps || out.reason !== 'completed') throw new Error(`turn ended ${out.reason} after ${out.steps} steps`);
  return c.counts;
}

/** The same turn through the floor (floor.ts). */
export async function floorTurnMicrosteps(steps: number): Promise<Microsteps> {
  const c = microstepCounter();
  await runFloorSteps(steps, c.inspect);
  return c.counts;
}

/** Microsteps one more step of one call costs, by machine and in `total` (see the header). */
export async function microstepsPerStep(turn: (steps: number) => Promise<Microsteps>, n = 3): Promise<Microsteps> {
  const a = await turn(n);
  const b = await turn(n + 2);
  const out: Microsteps = {};
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const d = ((b[k] ?? 0) - (a[k] ?? 0)) / 2;
    if (d !== 0) out[k] = d;
  }
  return out;
}

// `node dist/bench/microsteps.js`: the figures alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`bridle: ${JSON.stringify(await microstepsPerStep(bridleTurnMicrosteps))}\n`);
  process.stdout.write(`floor:  ${JSON.stringify(await microstepsPerStep(floorTurnMicrosteps))}\n`);
}
