/**
 * The soak's generated kill points (ADR 0043): one per state of the tool-call,
 * step, turn and subagent machines, read from the machine definitions, so a
 * state added to a machine gets a kill point with no list to update. Each
 * runs in the first scenario whose probe run (unkilled, with
 * `BRIDLE_SOAK_STATES`) entered that state; a state no scenario enters is
 * reported "not reached", never dropped.
 *
 * Also here: reading a session's tree of logs (the parent's and its
 * subagents') after a trial, verifying each.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AnyStateMachine } from 'xstate';
import { replayMachines } from '../cli/replay-machines.js';
import { verifyFile, verifyParsed, type ReplayVerdict } from '../cli/verify-log.js';
import type { Entry } from '../log/entries.js';
import { statePaths } from '../machines/state-paths.js';
import type { SessionStore, StoredLog } from '../ports/store.js';
import { parseStoredLog } from '../runtime/logs/read.js';
import { stepMachine } from '../machines/step.machine.js';
import { subagentMachine } from '../machines/subagent.machine.js';
import { toolCallMachine } from '../machines/tool-call.machine.js';
import { turnMachine } from '../machines/turn.machine.js';
import type { World } from '../test/fault/cli-world.js';
import type { Scenario } from './soak-scenarios.js';

/** The machines whose every state gets a kill point. */
export const KILL_MACHINES: readonly AnyStateMachine[] = [toolCallMachine, stepMachine, turnMachine, subagentMachine];

/** Contract: pure; `<machine id>.<state path>` for every state of every machine in `machines`, in definition order. */
export function killPoints(machines: readonly AnyStateMachine[] = KILL_MACHINES): string[] {
  return machines.flatMap((m) => statePaths(m).map((s) => `${m.id}.${s}`));
}

export interface PointPlan {
  /** Each reachable point with the scenario that reaches it. */
  runs: { point: string; scenario: Scenario }[];
  /** Points no scenario's probe entered. */
  notReached: string[];
}

/** Contract: pure; each point goes to the first scenario (in `reached`'s order) whose probe entered it. */
export function planPoints(points: readonly string[], reached: ReadonlyMap<Scenario, ReadonlySet<string>>): PointPlan {
  const plan: PointPlan = { runs: [], notReached: [] };
  for (const point of points) {
    const scenario = [...reached].find(([, states]) => states.has(point))?.[0];
    if (scenario) plan.runs.push({ point, scenario });
    else plan.notReached.push(point);
  }
  return plan;
}

/** The session logs of a world: the parent's first (a child's id extends its parent's, so its name is longer). */
export function treeLogs(w: World): string[] {
  const dir = path.join(w.home, 'sessions');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort((a, b) => a.length - b.length || a.localeCompare(b))
    .map((f) => path.join(dir, f));
}

export interface LogCheck {
  /** Where the log is: its file, or `postgres://…#<id>`. */
  path: string;
  /** The session's id (a JSONL log's name without `.jsonl`). */
  id: string;
  ok: boolean;
  entries: Entry[];
  /** Nothing was ever written to it: a 0-byte file, or a session the store holds no line of. */
  empty: boolean;
  problem?: string;
}

/** Contract: never throws; `verifyFile` (bridle replay's verifier) and a byte-for-byte machine replay of one log. */
export const checkLog = (p: string): Promise<LogCheck> =>
  checked(p, path.basename(p, '.jsonl'), () => ({ ...verifyFile(p), empty: fs.statSync(p).size === 0 }));

/**
 * Contract: never throws; as `checkLog`, for session `id` read through `store.read` (the store's own reader: its
 * lines, and what follows its last newline, as the store defines a torn tail), verified as `bridle replay` does.
 */
export async function checkStored(store: SessionStore, id: string): Promise<LogCheck> {
  let raw: StoredLog | undefined;
  let failed: Error | undefined;
  try {
    raw = await store.read(id);
  } catch (err) {
    failed = err as Error;
  }
  return checked(store.locate(id), id, () => {
    if (failed) throw failed;
    return { ...verifyParsed(parseStoredLog(raw ?? { location: store.locate(id), lines: [] })), empty: !raw || (raw.lines.length === 0 && !raw.last) };
  });
}

async function checked(where: string, id: string, read: () => { verdict: ReplayVerdict; entries: Entry[]; empty: boolean }): Promise<LogCheck> {
  try {
    const { verdict, entries, empty } = read();
    const machines = await replayMachines(entries);
    const problems = [
      ...(verdict.ok ? [] : [`does not verify: ${verdict.violations.map((v) => v.message).join('; ')}`]),
      ...(machines.identical ? [] : [`does not replay: ${machines.notReplayable ?? `differs at line ${machines.firstDifference}`}`]),
    ];
    return { path: where, id, ok: problems.length === 0, entries, empty, ...(problems.length ? { problem: problems.join('; ') } : {}) };
  } catch (err) {
    return { path: where, id, ok: false, entries: [], empty: false, problem: `unreadable: ${(err as Error).message}` };
  }
}
