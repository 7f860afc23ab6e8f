/**
 * The crash soak, short (ADR 0028, 0043, 0100): 14 real `bridle run`/`bridle chat`
 * processes killed with SIGKILL at seeded moments — the seven moments dealt in
 * turn, two rounds, workflows and delegations among them, whose child logs are
 * verified too — and six killed from inside at the entry of a machine state
 * (one per machine, a cancelling child, a read-only body: ADR 0072), each
 * resumed, verified and replayed through the machines. `npm run soak` is
 * the long version (300 kills by default).
 */
import { describe, expect, it } from 'vitest';
import { soak } from '../../bench/soak.js';
import { formatReport } from '../../bench/soak-report.js';
import { judge } from '../../bench/soak-judge.js';
import { KILL_WITHIN_MS, MOMENTS, reply, type Trial } from '../../bench/soak-moments.js';
import { SUMMARY_REQUEST_MARK } from '../../log/context/summary-prompt.js';
import { pausedMs, type Reply } from '../helpers/openai-sse-server.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import { cliBuilt } from './cli-world.js';
import { killPoints, KILL_MACHINES, planPoints } from '../../bench/soak-points.js';
import { statePaths } from '../../machines/state-paths.js';

const at = '2026-01-01T00:00:00.000Z';
const input = (seq: number, text: string): EntryOf<'session/input'> => ({ seq, at, kind: 'session/input', mode: 'followup', text, origin: 'user' });
const call = (seq: number, callId: string, label: string) => ({ seq, at, kind: 'tool/call', turn: 't1', step: 1, callId, name: 'bash', arguments: JSON.stringify({ command: `echo ${label} >> marker` }) }) as unknown as Entry;
const dispatch = (seq: number, callId: string) => ({ seq, at, kind: 'tool/dispatch', turn: 't1', step: 1, callId }) as unknown as Entry;
const childStart = (seq: number, child: string) => ({ seq, at, kind: 'subagent/start', callId: 't1.s1.c2', child, depth: 1, mode: 'spawn' }) as unknown as Entry;
const start = (seq: number, from: number) => ({ seq, at, kind: 'turn/start', turn: `t${seq}`, input: 'x', from }) as unknown as Entry;

describe('the soak judges what a killed and resumed session left', () => {
  it('a body whose marker line is there twice ran twice; one with no dispatch logged ran undispatched', () => {
    const entries = [input(1, 'go'), start(2, 1), call(3, 't1.s1.c1', 't0k1'), dispatch(4, 't1.s1.c1'), call(5, 't1.s1.c2', 't0k2')];
    const j = judge({ entries, marks: ['t0k1', 't0k2', 't0k1'], saved: [input(1, 'go')], acked: [] });
    expect(j).toMatchObject({ ranTwice: 1, ranUndispatched: 1, inputsLost: 0, marks: 3 });
  });

  it("a child's body is judged by the child's own log: dispatched there, it ran once; a child started twice is a delegating body run twice", () => {
    // Every child's first call is t1.s1.c1, as the parent's is: a call is its log and its id.
    const parent = [input(1, 'go'), start(2, 1), call(3, 't1.s1.c1', 't0k1'), dispatch(4, 't1.s1.c1'), childStart(5, 's.t1.s1.c2.a1')];
    const child = [input(1, 'task'), start(2, 1), call(3, 't1.s1.c1', 't0k2'), dispatch(4, 't1.s1.c1')];
    const undispatched = [input(1, 'task'), start(2, 1), call(3, 't1.s1.c1', 't0k3')];
    expect(judge({ entries: parent, children: [child], marks: ['t0k1', 't0k2'], saved: [], acked: [] })).toMatchObject({ ranTwice: 0, ranUndispatched: 0, marks: 2 });
    expect(judge({ entries: parent, children: [child, undispatched], marks: ['t0k1', 't0k2', 't0k3'], saved: [], acked: [] }).ranUndispatched).toBe(1);
    expect(judge({ entries: [...parent, childStart(6, 's.t1.s1.c2.a1')], children: [child], marks: [], saved: [], acked: [] }).ranTwice).toBe(1);
  });

  it('an acknowledged input that no turn took, or that two took, or that the log lacks, is lost', () => {
    const entries = [input(1, 'go'), start(2, 1), input(3, 'then this'), input(4, 'and this'), start(5, 4), start(6, 4)];
    expect(judge({ entries, marks: [], saved: [input(1, 'go'), input(3, 'then this')], acked: ['and this', 'never logged'] })).toMatchObject({ inputsLost: 3, inputs: 4 });
    expect(judge({ entries: [...entries.slice(0, 5), start(6, 3)], marks: [], saved: [input(1, 'go'), input(3, 'then this')], acked: ['and this'] }).inputsLost).toBe(0);
  });
});

describe('the soak\'s slow replies outlast the kill that waits inside them', () => {
  const trial = (moment: Trial['moment']): Trial => ({ id: 0, moment, rng: () => 0.5, phase: 'run', calls: 0, requests: 0 });
  const streamMs = (r: Reply) => (r.type === 'stream' ? pausedMs(r.chunks) : 0);
  it('a streaming answer streams longer than a streaming kill waits, and a summary longer than a compaction kill waits', () => {
    // Both once streamed in three deltas (about 25 and 75 ms): on an idle machine every streaming run ended before its kill.
    expect(streamMs(reply(trial('streaming'), { messages: [{ role: 'user', content: 'soak trial 0: go' }] }))).toBeGreaterThan(KILL_WITHIN_MS.streaming);
    expect(streamMs(reply(trial('compaction'), { messages: [{ role: 'user', content: `${SUMMARY_REQUEST_MARK} now` }] }))).toBeGreaterThanOrEqual(KILL_WITHIN_MS.summary);
  });
});

describe('the kill points come from the machines', () => {
  it('every state of the four machines is a kill point, and one no scenario reaches is reported, not dropped', () => {
    const points = killPoints();
    expect(points).toHaveLength(KILL_MACHINES.reduce((n, m) => n + statePaths(m).length, 0));
    for (const m of KILL_MACHINES) for (const s of statePaths(m)) expect(points).toContain(`${m.id}.${s}`);
    const plan = planPoints(['tool-call.executing', 'tool-call.notDurable', 'subagent.running'], new Map([['tools', new Set(['tool-call.executing'])], ['workflow', new Set(['tool-call.executing', 'subagent.running'])]] as const));
    expect(plan).toEqual({ runs: [{ point: 'tool-call.executing', scenario: 'tools' }, { point: 'subagent.running', scenario: 'workflow' }], notReached: ['tool-call.notDurable'] });
  });
});

// One per machine, in a scenario that enters it (no probe runs, to keep the suite's time); the kill that left a
// cancelled child's log open under its closed bracket (resume did not repair it); and one after a read-only body
// that nothing has flushed (ADR 0072).
const ONE_PER_MACHINE = [
  { point: 'tool-call.executing', scenario: 'tools' },
  { point: 'step.retrying', scenario: 'retry' },
  { point: 'turn.compacting', scenario: 'compaction' },
  { point: 'subagent.running', scenario: 'workflow' },
  { point: 'subagent.cancelling', scenario: 'cancel' },
  // ADR 0072: a read-only call's result is written and nothing has flushed its dispatch yet.
  { point: 'tool-call.settling', scenario: 'reads' },
] as const;

/** Two rounds of the seven moments (bench/soak.ts deals them in turn); the long soak's 300 kills are `npm run soak`'s (ADR 0100). */
const KILLS = 2 * MOMENTS.length;

describe.skipIf(!cliBuilt)('crash soak (14 kills, and one at a state of each machine)', () => {
  it('14 SIGKILLs at seeded moments (workflows and delegations among them) and 6 at machine states: every log of every tree verifies and replays, no body ran twice, no acknowledged input is lost', async () => {
    const r = await soak({ kills: KILLS, concurrency: 3, seed: 1, pinned: ONE_PER_MACHINE });
    const summary = [...formatReport(r), ...r.problems].join('\n');
    expect(r.kills, summary).toBe(KILLS + ONE_PER_MACHINE.length);
    for (const m of MOMENTS) expect(r.byMoment[m], `${m}\n${summary}`).toBeGreaterThan(0);
    for (const { point } of ONE_PER_MACHINE) expect(r.byState[point], `${point}\n${summary}`).toBe(1);
    expect(r.points, summary).toEqual(killPoints());
    expect(r.statesMissed, summary).toEqual([]);
    expect(r.childLogs, summary).toBeGreaterThan(0);
    expect({ unverified: r.unverified, ranTwice: r.ranTwice, inputsLost: r.inputsLost, childUnverifiable: r.childUnverifiable }, summary).toEqual({ unverified: 0, ranTwice: 0, inputsLost: 0, childUnverifiable: 0 });
    expect({ ranUndispatched: r.ranUndispatched, resumesFailed: r.resumesFailed }, summary).toEqual({ ranUndispatched: 0, resumesFailed: 0 });
    // The checks had something to check.
    expect(r.marks).toBeGreaterThan(0);
    expect(r.inputs).toBeGreaterThan(KILLS);
  }, 240_000);
});
