/**
 * The crash soak (ADR 0028, DESIGN §8): `npm run soak -- --kills N` runs N
 * real `bridle run` (or `bridle chat`, for queued input) processes against a
 * local OpenAI-wire server, kills each with SIGKILL at a seeded moment —
 * while the answer streams, between a tool's dispatch and its result, as a
 * durable line is being flushed, during a compaction, with input queued —
 * then `bridle resume --continue`s it, verifies the log and replays it
 * through the machines, and counts what must never happen:
 *
 * - logs that do not verify (after the resume), or do not replay byte for byte;
 * - non-idempotent tool bodies that ran twice (every bash body appends a line
 *   naming its call to a marker file, so a body run twice is two lines);
 * - acknowledged inputs lost (an input saved before the kill, or one the chat
 *   said it had queued, that no turn took after the resume).
 *
 * Two moments hand work to subagents (ADR 0043): *workflow* (a script runs
 * agents in parallel and in a pipeline) and *delegate*; they are killed while
 * the children run, between a child's dispatch and its result, or while the
 * parent waits for the rest, and every child log is verified too. And one
 * kill point per state of the tool-call, step, turn and subagent machines
 * (bench/soak-points.ts), killed from inside the process at that state's
 * entry (`BRIDLE_SOAK_KILL_AT`, cli/soak-kill.ts).
 *
 * The process helpers are the fault suite's (test/fault/cli-world.ts); the
 * server is the test helpers' (test/helpers/openai-sse-server.ts).
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SUMMARY_REQUEST_MARK } from '../log/context/summary-prompt.js';
import type { Entry, EntryOf } from '../log/entries.js';
import { KILL_LINE } from '../cli/soak-kill.js';
import { checkLog, killPoints, planPoints, treeLogs } from './soak-points.js';
import { marking, SCENARIOS, scenarioFlags, scenarioReply, slowly, usage, type Scenario } from './soak-scenarios.js';
import { completeLines, createWorld, logHas, seeded, waitFor, type Child, type World } from '../test/fault/cli-world.js';
import { startOpenAIServer, streamReply, textChunks, toolCallChunks, type Reply } from '../test/helpers/openai-sse-server.js';

export const MOMENTS = ['streaming', 'dispatch', 'flush', 'compaction', 'queued', 'workflow', 'delegate'] as const;
export type Moment = (typeof MOMENTS)[number];

export interface SoakOptions {
  kills: number;
  /** Trials run at once (default 4). */
  concurrency?: number;
  /** Trial i draws its delays from seed + i (default 1). */
  seed?: number;
  /** Called as each trial ends (progress). */
  onTrial?: (t: TrialResult) => void;
  /**
   * The generated kill points to run besides the `kills` moment trials: every state of the four machines
   * (`'all'`), only these (`<machine>.<state>`), or none (default). Whichever: every state is probed, so the
   * report names each one no scenario reaches.
   */
  states?: 'all' | readonly string[];
}

export interface Judged {
  ranTwice: number;
  ranUndispatched: number;
  inputsLost: number;
  /** Marker lines and acknowledged inputs checked (so a soak that checked nothing can be told from a clean one). */
  marks: number;
  inputs: number;
  problems: string[];
}

export interface TrialResult extends Judged {
  trial: number;
  moment: Moment | 'state';
  /** The generated kill point this trial ran (`<machine>.<state>`), if any. */
  point?: string;
  /** Child logs checked after the resume, and how many did not verify or replay. */
  childLogs: number;
  childUnverifiable: number;
  /** Whether the child was still running when it was killed (a trial whose run finished first is a miss, not a kill). */
  killed: boolean;
  resumed: boolean;
  verifies: boolean;
}

const emptyResult = (t: { id: number; moment: Moment | 'state'; killAt?: string }, problems: string[] = []): TrialResult => ({
  trial: t.id,
  moment: t.moment,
  ...(t.killAt ? { point: t.killAt } : {}),
  childLogs: 0,
  childUnverifiable: 0,
  killed: false,
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

/** The longest wait of a kill after its moment begins: the slow replies must outlast it, or the run ends first. */
export const KILL_WITHIN_MS = { streaming: 350, summary: 300 } as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const WINDOW = 16_000;

export interface Trial {
  id: number;
  /** `state`: a generated kill point's trial (its scenario's answers, killed from inside at `killAt`). */
  moment: Moment | 'state';
  /** The scenario a subagent moment or a generated kill point runs (the other moments have their own answers). */
  scenario?: Scenario;
  /** `BRIDLE_SOAK_KILL_AT` for the run: the process kills itself there. */
  killAt?: string;
  rng: () => number;
  phase: 'run' | 'resume';
  /** Bash calls handed out, to name each one's marker line. */
  calls: number;
  /** Model requests of the run phase seen (the streaming trial's kill waits for its first). */
  requests: number;
}

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i} `).join('');

/** The model's side of each trial: answers follow from the trial's moment and how far its turn has come. */
export function reply(t: Trial, body: { messages: { role: string; content?: unknown }[] }): Reply {
  if (t.scenario && t.scenario !== 'compaction') return scenarioReply(t, t.scenario, body);
  const last = body.messages.at(-1);
  if (last?.role === 'user' && typeof last.content === 'string' && last.content.startsWith(SUMMARY_REQUEST_MARK)) {
    // Slow, so the kill lands inside the compaction.
    return streamReply([...slowly('## Request and intent\nsoak\n## Current work\nmarking\n## Next step\ngo on', 12, 25), usage(300)]);
  }
  if (t.phase === 'resume') return streamReply([...textChunks('carried on after the crash'), usage()]);
  t.requests++;
  // Model requests since the turn's input: how many answers this turn has had.
  const step = body.messages.length - 1 - body.messages.findLastIndex((m) => m.role === 'user');
  switch (t.scenario === 'compaction' ? 'compaction' : t.moment) {
    case 'streaming':
      return streamReply([...slowly(words(60), 60, 8), usage()]);
    case 'dispatch':
      return step === 0 ? streamReply([...toolCallChunks([marking(t, 0.3), marking(t, 0.3)]), usage()]) : streamReply([...textChunks('both ran'), usage()]);
    case 'flush':
      return step < 6 ? streamReply([...toolCallChunks([marking(t, 0)]), usage()]) : streamReply([...textChunks('all marked'), usage()]);
    case 'compaction':
    case 'workflow':
    case 'delegate':
    case 'state':
      // Each answer says the context is nearly full, so the turn compacts before its next step: the first
      // compactions find nothing to do or prune the long outputs, the fourth summarizes (a slow request).
      return step < 5 ? streamReply([...toolCallChunks([marking(t, 0, 'seq 1 2000')]), usage(WINDOW - 500)]) : streamReply([...textChunks('compacted and done'), usage()]);
    case 'queued':
      return step === 0 ? streamReply([...toolCallChunks([marking(t, 0.4)]), usage()]) : streamReply([...textChunks('done with that'), usage()]);
  }
}

const trialOf = (body: { messages?: { role: string; content?: unknown }[] }) => {
  for (const m of body.messages ?? []) {
    const id = m.role === 'user' && typeof m.content === 'string' ? /soak trial (\d+)/.exec(m.content)?.[1] : undefined;
    if (id) return Number(id);
  }
  return undefined;
};

/** The log's text as the kill moments poll it (every 2 ms): read again only when the file has grown. */
function growingLog(w: World): () => string {
  let path: string | undefined;
  let size = -1;
  let text = '';
  return () => {
    path ??= w.logPath();
    if (!path) return '';
    const now = statSync(path).size;
    if (now !== size) [size, text] = [now, readFileSync(path, 'utf8')];
    return text;
  };
}

/** The subagents' logs of a world, as one text (each read whole: they are short). */
const childLogs = (w: World) => () => treeLogs(w).slice(1).map((p) => readFileSync(p, 'utf8')).join('');
const count = (text: string, kind: string) => text.split(`"kind":"${kind}"`).length - 1;

/** Waits for the trial's kill moment; resolves early when the child exits on its own. */
async function killMoment(t: Trial, log: () => string, child: Child, stdinLine: (line: string) => void, children: () => string): Promise<string[]> {
  const exited = () => child.proc.exitCode !== null || child.proc.signalCode !== null;
  const until = (cond: () => boolean, what: string) => waitFor(() => cond() || exited(), 20_000, `trial ${t.id}: ${what}`);
  const acked: string[] = [];
  switch (t.moment) {
    case 'streaming':
      await until(() => t.requests > 0, 'the first model request');
      await sleep(t.rng() * KILL_WITHIN_MS.streaming);
      break;
    case 'dispatch':
      await until(() => logHas(log(), 'tool/dispatch'), 'a dispatch');
      await sleep(t.rng() * 700);
      break;
    case 'flush': {
      // Right as a durable line is written, while its fsync runs (or just after).
      const kinds = ['tool/dispatch', 'tool/result', 'turn/end'] as const;
      const kind = kinds[Math.floor(t.rng() * kinds.length)]!;
      const nth = kind === 'turn/end' ? 1 : 1 + Math.floor(t.rng() * 5);
      await until(() => log().split(`"kind":"${kind}"`).length > nth, `${kind} #${nth}`);
      if (t.rng() < 0.5) await sleep(t.rng() * 2);
      break;
    }
    case 'compaction': {
      // One of the four: at its first line (the quick ones) or inside it (the summary request streams for ~300 ms).
      const nth = 1 + Math.floor(t.rng() * 4);
      await until(() => log().split('"kind":"compaction/start"').length > nth, `compaction #${nth}`);
      await sleep(nth === 4 ? t.rng() * KILL_WITHIN_MS.summary : t.rng() * 2);
      break;
    }
    case 'queued': {
      await until(() => logHas(log(), 'tool/dispatch'), 'the first turn to run its command');
      const text = `soak trial ${t.id}: then the second thing`;
      stdinLine(text);
      await until(() => child.stdout().includes('(queued: it runs after the current turn)'), 'the queued line to be acknowledged');
      if (child.stdout().includes('(queued:')) acked.push(text);
      await sleep(t.rng() * 300);
      break;
    }
    case 'workflow':
    case 'delegate': {
      // While the children run (from a child's first call on), right after a child's dispatch (before its
      // result), or while the parent waits for the rest after the nth child reported.
      const where = Math.floor(t.rng() * 3);
      if (where === 0) {
        await until(() => count(children(), 'tool/call') > 0, "a child's call");
        await sleep(t.rng() * 250);
      } else if (where === 1) {
        const nth = 1 + Math.floor(t.rng() * (t.moment === 'workflow' ? 4 : 1));
        await until(() => count(children(), 'tool/dispatch') >= nth, `child dispatch #${nth}`);
        await sleep(t.rng() * 2);
      } else {
        const nth = 1 + Math.floor(t.rng() * (t.moment === 'workflow' ? 3 : 1));
        await until(() => count(log(), 'subagent/end') >= nth, `subagent/end #${nth}`);
        await sleep(t.rng() * 20);
      }
      break;
    }
    case 'state':
      // The process kills itself at the state's entry (cli/soak-kill.ts): wait for it to die, or to end unkilled.
      await until(() => false, `the kill at ${t.killAt}`);
      break;
  }
  return acked;
}

const counts = (xs: readonly string[]) => xs.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map<string, number>());
const isEntry =
  <K extends Entry['kind']>(kind: K) =>
  (e: Entry): e is EntryOf<K> =>
    e.kind === kind;

/**
 * Contract: pure. What a trial's final log and marker file say: each body that ran (a marker line names its
 * call) ran once and had its dispatch logged; each input saved before the kill (`saved`) or acknowledged
 * to its sender (`acked`, by text) is in the log, and exactly one turn took it.
 */
export function judge(o: {
  entries: readonly Entry[];
  /** The subagents' logs: their bodies mark the same file, and each needs its dispatch in its own log. */
  children?: readonly (readonly Entry[])[];
  marks: readonly string[];
  saved: readonly EntryOf<'session/input'>[];
  acked: readonly string[];
}): Judged {
  const j: Judged = { ranTwice: 0, ranUndispatched: 0, inputsLost: 0, marks: o.marks.length, inputs: 0, problems: [] };
  // Call ids repeat across logs (every child has a t1.s1.c1): a call is its log's index and its id.
  const logs = [o.entries, ...(o.children ?? [])];
  const dispatched = new Set(logs.flatMap((es, i) => es.filter(isEntry('tool/dispatch')).map((d) => `${i}:${d.callId}`)));
  const callOf = new Map(logs.flatMap((es, i) => es.filter(isEntry('tool/call')).map((c) => [/echo (t\d+k\d+)/.exec(c.arguments)?.[1], `${i}:${c.callId}`] as const)));
  for (const label of new Set(o.marks)) {
    const n = o.marks.filter((m) => m === label).length;
    if (n > 1) (j.ranTwice++, j.problems.push(`${label} ran ${n} times`));
    const call = callOf.get(label);
    if (!call || !dispatched.has(call)) (j.ranUndispatched++, j.problems.push(`${label} ran with no dispatch in the log`));
  }
  // A delegating body (workflow, delegate) run again would start its children again.
  for (const [child, n] of counts(o.entries.filter(isEntry('subagent/start')).map((e) => e.child))) {
    if (n > 1) (j.ranTwice++, j.problems.push(`subagent ${child} started ${n} times`));
  }
  const inputs = o.entries.filter(isEntry('session/input'));
  const starts = o.entries.filter(isEntry('turn/start'));
  const takenOnce = (seq: number) => starts.filter((s) => s.from === seq).length === 1;
  const lost = new Set<string>();
  for (const saved of o.saved) if (!inputs.some((i) => i.seq === saved.seq && i.text === saved.text) || !takenOnce(saved.seq)) lost.add(saved.text);
  for (const text of o.acked) {
    const input = inputs.find((i) => i.text === text);
    if (!input || !takenOnce(input.seq)) lost.add(text);
  }
  j.inputs = new Set([...o.saved.map((i) => i.text), ...o.acked]).size;
  j.inputsLost = lost.size;
  for (const text of lost) j.problems.push(`acknowledged input lost: ${JSON.stringify(text)}`);
  return j;
}

async function runTrial(t: Trial, url: string): Promise<TrialResult> {
  const w = createWorld();
  const r = emptyResult(t);
  const problem = (s: string) => r.problems.push(`trial ${t.id} (${t.killAt ?? t.moment}): ${s}`);
  const env = { OPENAI_API_KEY: 'soak' };
  const common = ['--base-url', url, '--model', 'soak-model', '--cwd', w.workspace, ...scenarioFlags(t.scenario), '--context-window', String(WINDOW)];
  try {
    const prompt = `soak trial ${t.id}: mark the work`;
    const runEnv = t.killAt ? { ...env, BRIDLE_SOAK_KILL_AT: t.killAt } : env;
    const child =
      t.moment === 'queued' ? w.spawn(['chat', ...common], { env, stdin: true }) : w.spawn(['run', prompt, ...common], { env: runEnv });
    const line = (s: string) => child.proc.stdin?.write(`${s}\n`);
    if (t.moment === 'queued') line(prompt);
    const acked = await killMoment(t, growingLog(w), child, line, childLogs(w));
    const before = w.log();
    if (t.killAt) {
      await child.exit;
      r.killed = child.proc.signalCode === 'SIGKILL' && child.stderr().includes(`${KILL_LINE}${t.killAt}#`);
    } else {
      r.killed = child.proc.exitCode === null && child.proc.signalCode === null;
      child.proc.kill('SIGKILL');
      await child.exit;
    }
    const logPath = w.logPath();
    if (!logPath) {
      problem('no log was written before the kill');
      return r;
    }
    // What a reader saw before the kill: every session/input in it was acknowledged (saved before it was admitted).
    const seen = completeLines(before);
    const savedInputs = seen.flatMap((l) => {
      const e = JSON.parse(l) as Entry;
      return e.kind === 'session/input' && e.origin === 'user' ? [e] : [];
    });

    t.phase = 'resume';
    const resumed = w.spawn(['resume', logPath, '--continue', ...common], { env });
    const out = await resumed.exit;
    r.resumed = out.code === 0;
    if (!r.resumed) problem(`resume exited ${out.code ?? out.signal}: ${resumed.stderr().trim().split('\n').at(-1)}`);

    // The parent's log, then every child's: each verifies and replays (the resume repaired the children it left open).
    const [parent, ...children] = await Promise.all(treeLogs(w).map(checkLog));
    const prefix = completeLines(w.log()).slice(0, seen.length).every((l, i) => l === seen[i]);
    r.verifies = parent!.ok && prefix;
    if (!parent!.ok) problem(parent!.problem ?? 'does not verify');
    if (!prefix) problem('a line a reader saw before the kill was lost or rewritten');
    r.childLogs = children.length;
    for (const c of children.filter((c) => !c.ok)) (r.childUnverifiable++, problem(`child log ${path.basename(c.path)}: ${c.problem}`));

    // A body the kill orphaned may still be writing its line.
    await sleep(60);
    const j = judge({ entries: parent!.entries, children: children.map((c) => c.entries), marks: w.marker(), saved: savedInputs, acked });
    r.ranTwice = j.ranTwice;
    r.ranUndispatched = j.ranUndispatched;
    r.inputsLost = j.inputsLost;
    r.marks = j.marks;
    r.inputs = j.inputs;
    for (const p of j.problems) problem(p);
    return r;
  } finally {
    w.cleanup();
  }
}

/** Runs scenario `s` to its end, unkilled, and returns the `<machine>.<state>` entries it made (`BRIDLE_SOAK_STATES`). */
async function probe(t: Trial, url: string): Promise<Set<string>> {
  const w = createWorld();
  try {
    const file = path.join(w.root, 'states');
    const common = ['--base-url', url, '--model', 'soak-model', '--cwd', w.workspace, ...scenarioFlags(t.scenario), '--context-window', String(WINDOW)];
    const child = w.spawn(['run', `soak trial ${t.id}: mark the work`, ...common], { env: { OPENAI_API_KEY: 'soak', BRIDLE_SOAK_STATES: file } });
    const done = await Promise.race([child.exit, sleep(60_000).then(() => undefined)]);
    if (!done) child.proc.kill('SIGKILL');
    await child.exit;
    // An orphaned body of a cancelled child may still be running: leave its marker alone.
    await sleep(20);
    return new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean));
  } catch {
    return new Set();
  } finally {
    w.cleanup();
  }
}

export async function soak(o: SoakOptions): Promise<SoakReport> {
  const started = Date.now();
  const trials = new Map<number, Trial>();
  const srv = await startOpenAIServer();
  srv.respondWith((body) => {
    const t = trials.get(trialOf(body) ?? -1);
    return t ? reply(t, body) : { type: 'error', status: 400, body: { error: { message: 'soak: a request of no trial' } } };
  });
  const report: SoakReport = {
    kills: 0,
    missed: 0,
    byMoment: Object.fromEntries(MOMENTS.map((m) => [m, 0])) as Record<Moment, number>,
    byState: {},
    points: [],
    notReached: [],
    statesMissed: [],
    childLogs: 0,
    childUnverifiable: 0,
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
  const width = Math.max(1, o.concurrency ?? 4);
  const seed = o.seed ?? 1;
  /** Runs `jobs` `width` at a time. */
  const pool = async <T>(jobs: (() => Promise<T>)[]): Promise<T[]> => {
    const out: T[] = [];
    let i = 0;
    await Promise.all(Array.from({ length: width }, async () => {
      while (i < jobs.length) {
        const k = i++;
        out[k] = await jobs[k]!();
      }
    }));
    return out;
  };
  const newTrial = (id: number, moment: Trial['moment'], extra: Partial<Trial> = {}): Trial => {
    const t: Trial = { id, moment, rng: seeded(seed + id), phase: 'run', calls: 0, requests: 0, ...extra };
    trials.set(id, t);
    return t;
  };
  const tally = (t: Trial, r: TrialResult) => {
    trials.delete(t.id);
    if (r.killed) {
      report.kills++;
      if (t.moment === 'state') report.byState[t.killAt!] = (report.byState[t.killAt!] ?? 0) + 1;
      else report.byMoment[t.moment]++;
    } else if (t.moment === 'state') report.statesMissed.push(t.killAt!);
    else report.missed++;
    if (!r.verifies) report.unverified++;
    if (!r.resumed) report.resumesFailed++;
    report.childLogs += r.childLogs;
    report.childUnverifiable += r.childUnverifiable;
    report.ranTwice += r.ranTwice;
    report.ranUndispatched += r.ranUndispatched;
    report.inputsLost += r.inputsLost;
    report.marks += r.marks;
    report.inputs += r.inputs;
    report.problems.push(...r.problems);
    o.onTrial?.(r);
  };
  const attempt = async (t: Trial) => {
    let r: TrialResult;
    try {
      r = await runTrial(t, srv.url);
    } catch (err) {
      r = emptyResult(t, [`trial ${t.id} (${t.killAt ?? t.moment}): ${(err as Error).message}`]);
    }
    tally(t, r);
  };
  try {
    if (o.states) {
      // Which states each scenario enters, read from an unkilled run of it: a point goes to the first that reaches it.
      const reached = await pool(SCENARIOS.map((s, i) => () => probe(newTrial(1_000_000 + i, 'state', { scenario: s }), srv.url)));
      SCENARIOS.forEach((_, i) => trials.delete(1_000_000 + i));
      report.points = killPoints();
      const plan = planPoints(report.points, new Map(SCENARIOS.map((s, i) => [s, reached[i]!])));
      report.notReached = plan.notReached;
      const wanted = o.states === 'all' ? plan.runs : plan.runs.filter((p) => o.states!.includes(p.point));
      for (const p of o.states === 'all' ? [] : o.states) if (!report.points.includes(p)) report.problems.push(`no such kill point: ${p}`);
      await pool(wanted.map((p, i) => () => attempt(newTrial(2_000_000 + i, 'state', { scenario: p.scenario, killAt: p.point }))));
    }
    let next = 0;
    let running = 0;
    // A run that ends before its moment is a miss, not a kill: trials go on until there are `kills` moment kills (at most 3× as many trials).
    const stateKills = report.kills;
    const worker = async () => {
      while (report.kills - stateKills + running < o.kills && next < o.kills * 3) {
        const id = next++;
        running++;
        const moment = MOMENTS[id % MOMENTS.length]!;
        const t = newTrial(id, moment, moment === 'workflow' || moment === 'delegate' ? { scenario: moment } : {});
        await attempt(t);
        running--;
      }
    };
    await Promise.all(Array.from({ length: width }, worker));
  } finally {
    await srv.close();
  }
  report.ms = Date.now() - started;
  return report;
}

export function formatReport(r: SoakReport): string[] {
  const by = MOMENTS.map((m) => `${m} ${r.byMoment[m]}`).join(', ');
  return [
    `kills: ${r.kills} (${by})${r.missed ? `; ${r.missed} runs ended before their moment` : ''}`,
    `logs that do not verify (after resume; verify, machine replay, prefix): ${r.unverified}`,
    `non-idempotent tool bodies run twice: ${r.ranTwice}`,
    `acknowledged inputs lost: ${r.inputsLost}`,
    `also: bodies run with no dispatch in the log ${r.ranUndispatched}, resumes that failed ${r.resumesFailed}; checked ${r.marks} tool bodies and ${r.inputs} acknowledged inputs in ${(r.ms / 1000).toFixed(1)} s`,
  ];
}

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(v) || v < 1) throw new Error(`soak: ${name} wants a positive integer`);
  return v;
}

async function main() {
  const kills = flag('--kills', 300);
  const concurrency = flag('--concurrency', 4);
  const seed = flag('--seed', 1);
  process.stdout.write(`crash soak: ${kills} kills, ${concurrency} at a time, seed ${seed}\n`);
  let done = 0;
  const r = await soak({ kills, concurrency, seed, onTrial: () => void (++done % 25 === 0 && process.stderr.write(`  ${done}/${kills}\n`)) });
  for (const p of r.problems.slice(0, 20)) process.stdout.write(`  ${p}\n`);
  for (const l of formatReport(r)) process.stdout.write(`${l}\n`);
  const bad = r.unverified + r.ranTwice + r.inputsLost + r.ranUndispatched + r.resumesFailed;
  process.exitCode = bad === 0 ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
