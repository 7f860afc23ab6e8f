/**
 * The crash soak's tally (ADR 0028, 0043, 0103): one trial's result, the report they add up to, and its lines as
 * `npm run soak` prints them. The trials themselves run in `soak.ts`.
 */
import type { Judged } from './soak-judge.js';
import { MOMENTS, type Moment, type Trial } from './soak-moments.js';
import { STORE_NOTES, type SoakStore } from './soak-store.js';

export interface TrialResult extends Judged {
  trial: number;
  moment: Moment | 'state';
  /** The generated kill point this trial ran (`<machine>.<state>`), if any. */
  point?: string;
  /** Child logs checked after the resume, and how many did not verify or replay. */
  childLogs: number;
  childUnverifiable: number;
  /**
   * Child logs left empty (0 bytes) by a kill while the child was being created, with no `subagent/start` for it in
   * the parent: nothing was written, so nothing can be lost, but `bridle replay` cannot read them either (ADR 0043).
   */
  childEmpty: number;
  /** Whether the child was still running when it was killed (a trial whose run finished first is a miss, not a kill). */
  killed: boolean;
  /** Killed before anything was committed (Postgres): nothing saved, nothing acknowledged, no session to resume. */
  unsaved: boolean;
  resumed: boolean;
  verifies: boolean;
}

/** A trial's result before any check has run (a trial that could not start, or one still to be judged). */
export const emptyResult = (t: { id: number; moment: Moment | 'state'; killAt?: string }, problems: string[] = []): TrialResult => ({
  trial: t.id,
  moment: t.moment,
  ...(t.killAt ? { point: t.killAt } : {}),
  childLogs: 0,
  childUnverifiable: 0,
  childEmpty: 0,
  killed: false,
  unsaved: false,
  resumed: false,
  verifies: false,
  ranTwice: 0,
  ranUndispatched: 0,
  inputsLost: 0,
  marks: 0,
  inputs: 0,
  problems,
});

export interface SoakReport {
  /** The store the trials' sessions were on, and what differs on it (`STORE_NOTES`). */
  store: SoakStore['kind'];
  storeNotes: string[];
  kills: number;
  missed: number;
  byMoment: Record<Moment, number>;
  /** Kills at generated kill points (each also counted in `kills`), by `<machine>.<state>`. */
  byState: Record<string, number>;
  /** Every kill point enumerated from the machines, and those no scenario reaches. */
  points: string[];
  notReached: string[];
  /** Kill points whose trial ran to its end without entering the state (its probe did). */
  statesMissed: string[];
  childLogs: number;
  childUnverifiable: number;
  /**
   * Child logs left empty (0 bytes) by a kill while the child was being created, with no `subagent/start` for it in
   * the parent: nothing was written, so nothing can be lost, but `bridle replay` cannot read them either (ADR 0043).
   */
  childEmpty: number;
  /** Trials killed before their session's first commit (Postgres): nothing was saved or acknowledged, so nothing to resume. */
  unsaved: number;
  unverified: number;
  ranTwice: number;
  ranUndispatched: number;
  inputsLost: number;
  resumesFailed: number;
  /** Marker lines and acknowledged inputs checked, over all trials. */
  marks: number;
  inputs: number;
  ms: number;
  problems: string[];
}

/** A report of no trials yet. */
export function emptyReport(store: SoakStore['kind']): SoakReport {
  return {
    store,
    storeNotes: STORE_NOTES[store],
    kills: 0,
    missed: 0,
    byMoment: Object.fromEntries(MOMENTS.map((m) => [m, 0])) as Record<Moment, number>,
    byState: {},
    points: [],
    notReached: [],
    statesMissed: [],
    childLogs: 0,
    childUnverifiable: 0,
    childEmpty: 0,
    unsaved: 0,
    unverified: 0,
    ranTwice: 0,
    ranUndispatched: 0,
    inputsLost: 0,
    resumesFailed: 0,
    marks: 0,
    inputs: 0,
    ms: 0,
    problems: [],
  };
}

/** One trial's result counted into the report: a kill by its moment or state, else a miss, and what its checks found. */
export function tallyInto(report: SoakReport, t: Trial, r: TrialResult): void {
  if (r.killed) {
    report.kills++;
    if (t.moment === 'state') report.byState[t.killAt!] = (report.byState[t.killAt!] ?? 0) + 1;
    else report.byMoment[t.moment]++;
  } else if (t.moment === 'state') report.statesMissed.push(t.killAt!);
  else report.missed++;
  if (r.unsaved) report.unsaved++;
  if (!r.verifies) report.unverified++;
  if (!r.resumed) report.resumesFailed++;
  report.childLogs += r.childLogs;
  report.childUnverifiable += r.childUnverifiable;
  report.childEmpty += r.childEmpty;
  report.ranTwice += r.ranTwice;
  report.ranUndispatched += r.ranUndispatched;
  report.inputsLost += r.inputsLost;
  report.marks += r.marks;
  report.inputs += r.inputs;
  report.problems.push(...r.problems);
}

/** The generated kill points' kills by machine: `tool-call 12/15 (not reached: notDurable, aborted)`. */
function byMachine(r: SoakReport): string {
  const machines = [...new Set(r.points.map((p) => p.slice(0, p.indexOf('.'))))];
  return machines
    .map((m) => {
      const mine = r.points.filter((p) => p.startsWith(`${m}.`));
      const killed = mine.filter((p) => r.byState[p]).length;
      const unreached = r.notReached.filter((p) => p.startsWith(`${m}.`)).map((p) => p.slice(m.length + 1));
      return `${m} ${killed}/${mine.length}${unreached.length ? ` (not reached: ${unreached.join(', ')})` : ''}`;
    })
    .join('; ');
}

export function formatReport(r: SoakReport): string[] {
  const by = MOMENTS.map((m) => `${m} ${r.byMoment[m]}`).join(', ');
  const stateKills = Object.values(r.byState).reduce((a, b) => a + b, 0);
  return [
    ...(r.store === 'jsonl' ? [] : [`store: ${r.store}`, ...r.storeNotes.map((n) => `  ${n}`)]),
    `kills: ${r.kills} (${by}${stateKills ? `, at machine states ${stateKills}` : ''})${r.missed ? `; ${r.missed} runs ended before their moment` : ''}`,
    ...(r.points.length
      ? [
          `machine states: ${r.points.length} enumerated, ${stateKills} killed at their entry, ${r.notReached.length} not reached by any scenario${r.statesMissed.length ? `, ${r.statesMissed.length} not entered in their trial (${r.statesMissed.join(', ')})` : ''}: ${byMachine(r)}`,
        ]
      : []),
    `child logs checked: ${r.childLogs}, unverifiable: ${r.childUnverifiable}${r.childEmpty ? `; left empty by a kill as the child was created (never bracketed): ${r.childEmpty}` : ''}`,
    ...(r.unsaved ? [`killed before their first commit (nothing saved, nothing acknowledged, nothing to resume): ${r.unsaved}`] : []),
    `logs that do not verify (after resume; verify, machine replay, prefix): ${r.unverified}`,
    `non-idempotent tool bodies run twice: ${r.ranTwice}`,
    `acknowledged inputs lost: ${r.inputsLost}`,
    `also: bodies run with no dispatch in the log ${r.ranUndispatched}, resumes that failed ${r.resumesFailed}; checked ${r.marks} tool bodies and ${r.inputs} acknowledged inputs in ${(r.ms / 1000).toFixed(1)} s`,
  ];
}
