/**
 * The soak's fault-injection hook (ADR 0043), loaded by the CLI's entry only
 * when one of its variables is set, and left out of the published package:
 *
 * - `BRIDLE_SOAK_KILL_AT=<machine>.<state>[#n]` — the process SIGKILLs itself
 *   at the n-th entry (default 1, counted over every actor of that machine in
 *   the process) of that state, e.g. `tool-call.executing#2`, `step.retrying`,
 *   `subagent.running`. The machine is named by its `id`.
 * - `BRIDLE_SOAK_STATES=<file>` — every state entry is appended to the file
 *   as a `<machine>.<state>` line (a probe: which states a scenario reaches).
 *
 * "At entry" means: as the inspector reports the microstep that entered the
 * state, after its entry actions ran (an entry `record` is appended, not yet
 * flushed) and before the actors it invokes start (they start after the
 * macrostep); the initial state of an actor is entered as the actor is
 * created, before anything of it runs. The hook only observes and, at its
 * point, ends the process as an outside SIGKILL would: it changes nothing the
 * log holds. Before the kill it writes one line to stderr, so the soak can
 * tell its kill from any other death.
 */
import { appendFileSync, writeSync } from 'node:fs';
import type { ActorRefLike, AnyStateMachine, InspectionEvent, StateValue } from 'xstate';
import { activePaths, initialPaths } from '../machines/state-paths.js';
import { installFaultInspector } from '../runtime/fault-injection.js';
import { UsageError } from './errors.js';

export const KILL_LINE = 'bridle: soak: SIGKILL at ';

export interface KillAt {
  machine: string;
  state: string;
  nth: number;
}

/** Contract: pure; `<machine>.<state>[#n]`, or a UsageError naming the variable. */
export function parseKillAt(text: string): KillAt {
  const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_.-]+?)(?:#(\d+))?$/.exec(text);
  if (!m || (m[3] !== undefined && Number(m[3]) < 1)) throw new UsageError(`BRIDLE_SOAK_KILL_AT: wants <machine>.<state>[#n] (got ${JSON.stringify(text)})`);
  return { machine: m[1]!, state: m[2]!, nth: m[3] === undefined ? 1 : Number(m[3]) };
}

const machineOf = (ref: ActorRefLike): AnyStateMachine | undefined => {
  const logic = (ref as { logic?: { root?: unknown; id?: unknown } }).logic;
  return logic && logic.root && typeof logic.id === 'string' ? (logic as unknown as AnyStateMachine) : undefined;
};

/** The inspector that calls `onEnter(machine, state)` at each state entry of every machine actor it sees. */
export function stateEntries(onEnter: (machine: string, state: string) => void): (e: InspectionEvent) => void {
  const active = new WeakMap<ActorRefLike, Set<string>>();
  return (e) => {
    const machine = machineOf(e.actorRef);
    if (!machine) return;
    let prev = active.get(e.actorRef);
    if (!prev) {
      prev = new Set(initialPaths(machine));
      active.set(e.actorRef, prev);
      for (const s of prev) onEnter(machine.id, s);
    }
    if (e.type !== '@xstate.microstep') return;
    const now = new Set(activePaths((e.snapshot as unknown as { value: StateValue }).value));
    active.set(e.actorRef, now);
    for (const s of now) if (!prev.has(s)) onEnter(machine.id, s);
  };
}

/** Contract: installs nothing when neither variable is set; throws UsageError on a malformed `BRIDLE_SOAK_KILL_AT`. */
export function installSoakHook(env: NodeJS.ProcessEnv): void {
  const at = env.BRIDLE_SOAK_KILL_AT ? parseKillAt(env.BRIDLE_SOAK_KILL_AT) : undefined;
  const trace = env.BRIDLE_SOAK_STATES || undefined;
  if (!at && !trace) return;
  let seen = 0;
  installFaultInspector(
    stateEntries((machine, state) => {
      if (trace) {
        try {
          appendFileSync(trace, `${machine}.${state}\n`);
        } catch {}
      }
      if (at && machine === at.machine && state === at.state && ++seen === at.nth) {
        try {
          writeSync(2, `${KILL_LINE}${machine}.${state}#${at.nth}\n`);
        } catch {}
        process.kill(process.pid, 'SIGKILL');
      }
    }),
  );
}
