/**
 * The crash soak (ADR 0028, docs/design.md §8): `npm run soak -- --kills N` runs N
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
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import type { Entry } from '../log/entries.js';
import { KILL_LINE } from '../cli/soak-kill.js';
import { judge } from './soak-judge.js';
import { emptyReport, emptyResult, formatReport, tallyInto, type SoakReport, type TrialResult } from './soak-report.js';
import { killMoment, MOMENTS, reply, trialOf, WINDOW, type Moment, type Trial } from './soak-moments.js';
import { killPoints, planPoints } from './soak-points.js';
import { jsonlSoakStore, startPostgresSoakStore, type SoakStore } from './soak-store.js';
import { SCENARIOS, scenarioFlags, type Scenario } from './soak-scenarios.js';
import { completeLines, createWorld, seeded, type Child } from '../test/fault/cli-world.js';
import { startOpenAIServer } from '../test/helpers/openai-sse-server.js';
import { inPool } from './pool.js';

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
  /** The scenarios probed for the kill points (default: all); a state only the others reach is then "not reached". */
  scenarios?: readonly Scenario[];
  /** Kill points run in a named scenario with no probe (the CI's few); one its scenario does not enter is reported in `statesMissed`. */
  pinned?: readonly { point: string; scenario: Scenario }[];
  /** The moments the `kills` trials take in turn (default: all of them). */
  moments?: readonly Moment[];
  /** Where every trial's sessions live (default: JSONL under each trial's `$BRIDLE_HOME`); the caller closes it. */
  store?: SoakStore;
}


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));



/** How long a resume refused `SESSION_LOCKED` (a killed writer's lease not expired yet) is asked again. */
const LOCKED_FOR_MS = 30_000;

async function runTrial(t: Trial, url: string, store: SoakStore): Promise<TrialResult> {
  const w = createWorld();
  const logs = store.trial(w);
  const r = emptyResult(t);
  const problem = (s: string) => r.problems.push(`trial ${t.id} (${t.killAt ?? t.moment}): ${s}`);
  const env = { OPENAI_API_KEY: 'soak' };
  const common = ['--base-url', url, '--model', 'soak-model', '--cwd', w.workspace, ...scenarioFlags(t.scenario), '--context-window', String(WINDOW), ...logs.flags];
  // A trial that fails (a moment never came) must not leave its processes running into the next trials.
  const spawned: Child[] = [];
  try {
    const prompt = `soak trial ${t.id}: mark the work`;
    const runEnv = t.killAt ? { ...env, BRIDLE_SOAK_KILL_AT: t.killAt } : env;
    const child =
      t.moment === 'queued' ? w.spawn(['chat', ...common], { env, stdin: true }) : w.spawn(['run', prompt, ...common], { env: runEnv });
    spawned.push(child);
    logs.watch(child);
    const line = (s: string) => child.proc.stdin?.write(`${s}\n`);
    if (t.moment === 'queued') line(prompt);
    const acked = await killMoment(t, logs.log, child, line, logs.children);
    const beforeKill = logs.log();
    if (t.killAt) {
      await child.exit;
      r.killed = child.proc.signalCode === 'SIGKILL' && child.stderr().includes(`${KILL_LINE}${t.killAt}#`);
    } else {
      r.killed = child.proc.exitCode === null && child.proc.signalCode === null;
      child.proc.kill('SIGKILL');
      await child.exit;
    }
    const ref = await logs.ref();
    if (!ref) {
      // On Postgres nothing is in the store before the first commit: a kill before it saved nothing, and nothing was acknowledged.
      if (store.kind === 'postgres' && acked.length === 0) [r.unsaved, r.verifies, r.resumed] = [true, true, true];
      else problem('no log was written before the kill');
      return r;
    }
    // What a reader saw before the kill (on Postgres: what was committed when the writer died): every session/input in it was acknowledged (saved before it was admitted).
    const seen = completeLines(await logs.seen(beforeKill));
    const savedInputs = seen.flatMap((l) => {
      const e = JSON.parse(l) as Entry;
      return e.kind === 'session/input' && e.origin === 'user' ? [e] : [];
    });

    t.phase = 'resume';
    const killedAt = Date.now();
    let resumed: Child;
    let out: Awaited<Child['exit']>;
    let tries = 0;
    for (;;) {
      tries++;
      resumed = w.spawn(['resume', ref, '--continue', ...common], { env });
      spawned.push(resumed);
      out = await resumed.exit;
      // The killed writer's lease outlives it (Postgres): refused while it lasts, asked again until it expired.
      if (!(store.retryLocked && out.code === 2 && resumed.stderr().includes('SESSION_LOCKED') && Date.now() - killedAt < LOCKED_FOR_MS)) break;
      await sleep(100);
    }
    r.resumed = out.code === 0;
    if (!r.resumed) problem(`resume exited ${out.code ?? out.signal}${tries > 1 ? ` (try ${tries})` : ''}: ${resumed.stderr().trim().split('\n').filter((l) => l.startsWith('bridle:')).join(' / ')}`);

    // The parent's log, then every child's: each verifies and replays (the resume repaired the children it left open).
    const [parent, ...children] = await logs.tree();
    if (!parent) {
      problem('the log is gone after the resume');
      return r;
    }
    const prefix = completeLines(await logs.now()).slice(0, seen.length).every((l, i) => l === seen[i]);
    r.verifies = parent.ok && prefix;
    if (!parent.ok) problem(parent.problem ?? 'does not verify');
    if (!prefix) problem('a line a reader saw before the kill was lost or rewritten');
    r.childLogs = children.length;
    const bracketed = new Set(parent.entries.flatMap((e) => (e.kind === 'subagent/start' ? [e.child] : [])));
    for (const c of children.filter((c) => !c.ok)) {
      if (c.entries.length === 0 && c.empty && !bracketed.has(c.id)) r.childEmpty++;
      else (r.childUnverifiable++, problem(`child log ${path.basename(c.path)}: ${c.problem}`));
    }

    // A body the kill orphaned may still be writing its line.
    await sleep(60);
    const j = judge({ entries: parent.entries, children: children.map((c) => c.entries), marks: w.marker(), saved: savedInputs, acked });
    r.ranTwice = j.ranTwice;
    r.ranUndispatched = j.ranUndispatched;
    r.inputsLost = j.inputsLost;
    r.marks = j.marks;
    r.inputs = j.inputs;
    for (const p of j.problems) problem(p);
    return r;
  } finally {
    for (const c of spawned) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
    await Promise.all(spawned.map((c) => c.exit));
    await logs.close();
    w.cleanup();
  }
}

/** Runs scenario `s` to its end, unkilled, and returns the `<machine>.<state>` entries it made (`BRIDLE_SOAK_STATES`). */
async function probe(t: Trial, url: string, store: SoakStore): Promise<Set<string>> {
  const w = createWorld();
  try {
    const file = path.join(w.root, 'states');
    const common = ['--base-url', url, '--model', 'soak-model', '--cwd', w.workspace, ...scenarioFlags(t.scenario), '--context-window', String(WINDOW), ...store.trial(w).flags];
    const child = w.spawn(['run', `soak trial ${t.id}: mark the work`, ...common], { env: { OPENAI_API_KEY: 'soak', BRIDLE_SOAK_STATES: file } });
    const timer = setTimeout(() => child.proc.kill('SIGKILL'), 60_000);
    await child.exit;
    clearTimeout(timer);
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
  const store = o.store ?? jsonlSoakStore();
  const report = emptyReport(store.kind);
  const width = Math.max(1, o.concurrency ?? 4);
  const seed = o.seed ?? 1;
  const pool = <T>(jobs: (() => Promise<T>)[]) => inPool(width, jobs);
  const newTrial = (id: number, moment: Trial['moment'], extra: Partial<Trial> = {}): Trial => {
    const t: Trial = { id, moment, rng: seeded(seed + id), phase: 'run', calls: 0, requests: 0, ...extra };
    trials.set(id, t);
    return t;
  };
  const tally = (t: Trial, r: TrialResult) => {
    trials.delete(t.id);
    tallyInto(report, t, r);
    o.onTrial?.(r);
  };
  const attempt = async (t: Trial) => {
    let r: TrialResult;
    try {
      r = await runTrial(t, srv.url, store);
    } catch (err) {
      r = emptyResult(t, [`trial ${t.id} (${t.killAt ?? t.moment}): ${(err as Error).message}`]);
    }
    tally(t, r);
  };
  try {
    if (o.states) {
      // Which states each scenario enters, read from an unkilled run of it: a point goes to the first that reaches it.
      const scenarios = o.scenarios ?? SCENARIOS;
      const reached = await pool(scenarios.map((s, i) => () => probe(newTrial(1_000_000 + i, 'state', { scenario: s }), srv.url, store)));
      scenarios.forEach((_, i) => trials.delete(1_000_000 + i));
      report.points = killPoints();
      const plan = planPoints(report.points, new Map(scenarios.map((s, i) => [s, reached[i]!])));
      report.notReached = plan.notReached;
      const wanted = o.states === 'all' ? plan.runs : plan.runs.filter((p) => o.states!.includes(p.point));
      for (const p of o.states === 'all' ? [] : o.states) if (!report.points.includes(p)) report.problems.push(`no such kill point: ${p}`);
      await pool(wanted.map((p, i) => () => attempt(newTrial(2_000_000 + i, 'state', { scenario: p.scenario, killAt: p.point }))));
    } else if (o.pinned) {
      report.points = killPoints();
      for (const p of o.pinned) if (!report.points.includes(p.point)) report.problems.push(`no such kill point: ${p.point}`);
      await pool(o.pinned.map((p, i) => () => attempt(newTrial(2_000_000 + i, 'state', { scenario: p.scenario, killAt: p.point }))));
    }
    let next = 0;
    let running = 0;
    const moments = o.moments ?? MOMENTS;
    // A run that ends before its moment is a miss, not a kill: trials go on until there are `kills` moment kills (at most 3× as many trials).
    const stateKills = report.kills;
    const worker = async () => {
      while (report.kills - stateKills + running < o.kills && next < o.kills * 3) {
        const id = next++;
        running++;
        const moment = moments[id % moments.length]!;
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

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(v) || v < 1) throw new Error(`soak: ${name} wants a positive integer`);
  return v;
}

/** `--store jsonl` (the default), `--store postgres` (a throwaway cluster, or BRIDLE_TEST_PG_URL's server), or `--store postgres://…` (a database of its own on that server). */
async function storeFlag(): Promise<SoakStore> {
  const i = process.argv.indexOf('--store');
  const v = i >= 0 ? process.argv[i + 1] : 'jsonl';
  if (v === 'jsonl') return jsonlSoakStore();
  if (v === 'postgres') return startPostgresSoakStore();
  if (v && /^postgres(ql)?:\/\//.test(v)) return startPostgresSoakStore(v);
  throw new Error(`soak: --store wants jsonl, postgres or a postgres:// URL (got ${v ?? 'nothing'})`);
}

async function main() {
  const kills = flag('--kills', 300);
  const concurrency = flag('--concurrency', 4);
  const seed = flag('--seed', 1);
  // Every machine state is killed too, unless `--no-states`.
  const states = process.argv.includes('--no-states') ? undefined : ('all' as const);
  // `--moments workflow,delegate`: only these.
  const mi = process.argv.indexOf('--moments');
  const moments = mi >= 0 ? (process.argv[mi + 1] ?? '').split(',') : undefined;
  for (const m of moments ?? []) if (!(MOMENTS as readonly string[]).includes(m)) throw new Error(`soak: no such moment: ${m} (${MOMENTS.join(', ')})`);
  let store: SoakStore;
  try {
    store = await storeFlag();
  } catch (err) {
    const m = (err as Error).message;
    process.stderr.write(`${m.startsWith('soak:') ? m : `soak: ${m}`}\n`);
    process.exitCode = 2;
    return;
  }
  process.stdout.write(`crash soak: ${kills} kills${states ? ' and one at each machine state' : ''}, ${concurrency} at a time, seed ${seed}, store ${store.kind} (${store.where})\n`);
  let done = 0;
  try {
    const r = await soak({ kills, concurrency, seed, store, ...(moments ? { moments: moments as Moment[] } : {}), ...(states ? { states } : {}), onTrial: () => void (++done % 25 === 0 && process.stderr.write(`  ${done} trials\n`)) });
    for (const p of r.problems.slice(0, 20)) process.stdout.write(`  ${p}\n`);
    for (const l of formatReport(r)) process.stdout.write(`${l}\n`);
    const bad = r.unverified + r.ranTwice + r.inputsLost + r.ranUndispatched + r.resumesFailed + r.childUnverifiable;
    process.exitCode = bad === 0 ? 0 : 1;
  } finally {
    await store.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();

