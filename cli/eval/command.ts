/**
 * `bridle eval <dir> [--runs N] [--json]` and `bridle eval [<dir>] --replay
 * <logs...>`: the table (task, model, passes/N, steps, tokens, time) on
 * stdout, or one JSON document with `--json`; progress on stderr. Exit 0
 * when every run that was checked passed, 1 when one failed (or a setup
 * problem), 2 for usage or a log that does not verify, 130 cancelled.
 */
import { dirname, join } from 'node:path';
import { freshSessionId } from '../../runtime/catalogue.js';
import { UsageError } from '../errors.js';
import { sessionsDir } from '../home.js';
import { composeProduct, type Product, type SettingFlags } from '../settings.js';
import { isOpenAIUse } from '../../runtime/settings.js';
import { visible } from '../visible.js';
import { rescoreLogs } from './replay.js';
import { runEval } from './run.js';
import { formatTable, summarize, TABLE_NOTE, type RunRecord } from './score.js';
import { loadTasks, type Task } from './tasks.js';

export interface EvalFlags extends SettingFlags {
  runs?: string;
  json?: boolean;
  keep?: boolean;
  replay?: string[];
  /** Folders a task's workspace may lie in, besides the task set's own (default: the repository it is in). */
  workspaceRoot?: string[];
}

export interface EvalIo {
  out: { write(s: string): unknown };
  err: { write(s: string): unknown };
  /** The eval's id, which prefixes every run's session id; default a fresh one, as the `random` ids row makes them. */
  evalId?: string;
  signal?: AbortSignal;
}

function runsOf(raw: string | undefined): number {
  if (raw === undefined) return 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new UsageError(`--runs must be a whole number from 1 to 1000 (got ${JSON.stringify(raw)})`);
  return n;
}

/** `--model scripted` alone: each task's own `scripted.json`. Anything else is the model for every task, as `run` takes it. */
function modelFor(flags: EvalFlags, task: Task): string | undefined {
  if (flags.model !== 'scripted') return flags.model;
  return `scripted:${task.script}`;
}

/** Text that may hold what a model, a tool or a file wrote: shown line by line, never acted on. */
const shown = (text: string) => text.split('\n').map((l) => visible(l)).join('\n');

const SCRIPTED_NOTE = 'scripted: canned answers from a script file, not a model; its passes say the harness and the check work, not how well any model does.';

/** What the table cannot say about a run: why it was not checked, and how a check failed (the first line of its output). */
function runLines(r: RunRecord): string[] {
  const out: string[] = [];
  if (r.note) out.push(`${r.task} run ${r.run}: ${r.note}`);
  if (r.check && !r.check.passed) out.push(`${r.task} run ${r.run}: check failed (${r.check.code ?? `exit ${r.check.exitCode}`}): ${r.check.output.split('\n').find((l) => l.trim()) ?? '(no output)'}`);
  return out;
}

/** Which model the runs ask, from the composed `model` row (a flag, `BRIDLE_MODEL` or the config file may have named it): scripted, or live and where. */
function modelLine(flags: EvalFlags, product: Product): string {
  if (flags.model === 'scripted') return "model: scripted — each task's scripted.json (canned answers, not a model)";
  const row = product.rows.find((r) => r.id === 'model');
  const config = (row?.config ?? {}) as { file?: string; model?: string; baseUrl?: string };
  if (row?.use === 'scripted') return `model: scripted — ${visible(config.file ?? '')} (canned answers, not a model)`;
  if (isOpenAIUse(row?.use)) return `model: ${visible(config.model ?? '(none named)')} — live, at ${visible(config.baseUrl ?? '')}`;
  return `model: ${visible(row?.use ?? 'none')} (row ${visible(row?.id ?? 'model')})`;
}

function exitOf(records: readonly RunRecord[]): number {
  return records.some((r) => r.check && !r.check.passed) ? 1 : 0;
}

export async function evalCommand(dir: string | undefined, flags: EvalFlags, io: EvalIo = { out: process.stdout, err: process.stderr }): Promise<number> {
  const tasks = dir !== undefined ? loadTasks(dir, flags.workspaceRoot) : undefined;
  // Unattended: nobody is there to answer an approval, so the default is auto (inside the sandbox), unless --approval says otherwise.
  const settings: EvalFlags = { ...flags, approval: flags.approval ?? 'auto' };
  if (flags.replay) return replay(flags.replay, tasks, settings, io);
  if (!tasks) throw new UsageError('eval: name a folder of tasks, e.g. bridle eval examples/evals --model scripted');
  const runs = runsOf(flags.runs);
  if (flags.model === 'scripted') {
    const without = tasks.filter((t) => !t.script).map((t) => t.name);
    if (without.length) throw new UsageError(`--model scripted: no scripted.json in task ${without.join(', ')} (give --model scripted:<file> or a live model)`);
  }
  const evalId = io.evalId ?? freshSessionId();
  const products = new Map<string, Product>();
  const productFor = async (t: Task) => {
    const model = modelFor(settings, t);
    const key = model ?? '';
    if (!products.has(key)) products.set(key, await composeProduct({ ...settings, ...(model !== undefined ? { model } : {}) }));
    return products.get(key)!;
  };
  const first = await productFor(tasks[0]!);
  for (const w of first.warnings) io.err.write(`bridle: warning: ${w}\n`);
  io.err.write(`eval ${evalId}: ${tasks.length} task${tasks.length === 1 ? '' : 's'} × ${runs} run${runs === 1 ? '' : 's'}\n`);
  io.err.write(`${modelLine(flags, first)}\napproval: ${settings.approval}\n`);
  const result = await runEval({ evalId, tasks, runs, productFor, keep: flags.keep ?? false, progress: (l) => io.err.write(`${visible(l)}\n`), ...(io.signal ? { signal: io.signal } : {}) });
  const summaries = summarize(result.records);
  const logs = join(result.records[0] ? dirname(result.records[0].log) : sessionsDir(first.home), `${evalId}.*.jsonl`);
  if (flags.json) io.out.write(`${JSON.stringify({ mode: 'run', eval: evalId, runsPerTask: runs, tasks: summaries, runs: result.records, cancelled: result.cancelled })}\n`);
  else {
    io.out.write(`${shown(formatTable(summaries))}\n\n${TABLE_NOTE}\n`);
    if (summaries.some((s) => s.scripted)) io.out.write(`${SCRIPTED_NOTE}\n`);
    for (const r of result.records) for (const l of runLines(r)) io.out.write(`${visible(l)}\n`);
    io.out.write(`logs: ${logs}\nre-score them: bridle eval ${dir} --replay ${logs}\n`);
  }
  if (result.cancelled) return 130;
  return exitOf(result.records);
}

async function replay(logs: readonly string[], tasks: readonly Task[] | undefined, flags: EvalFlags, io: EvalIo): Promise<number> {
  if (logs.length === 0) throw new UsageError('eval --replay: name the logs to re-score');
  // Only the sandbox and subprocess rows are mounted (for the checks): no model is, whatever --model says.
  const { model: _unused, ...rest } = flags;
  const product = await composeProduct(rest);
  const { records, corrupt } = await rescoreLogs(logs, tasks, product);
  const summaries = summarize(records);
  if (flags.json) io.out.write(`${JSON.stringify({ mode: 'replay', tasks: summaries, runs: records, corrupt })}\n`);
  else {
    io.out.write(`re-scored ${records.length} log${records.length === 1 ? '' : 's'}: no model called, no tool run; checks run again only where the run's workspace is still there.\n\n`);
    if (summaries.length) io.out.write(`${shown(formatTable(summaries))}\n\n${TABLE_NOTE}\n`);
    if (summaries.some((s) => s.scripted)) io.out.write(`${SCRIPTED_NOTE}\n`);
    for (const r of records) for (const l of runLines(r)) io.out.write(`${visible(l)}\n`);
  }
  for (const c of corrupt) io.err.write(`bridle: ${visible(c.log)} does not verify (${visible(c.problem)}); not scored\n`);
  return corrupt.length ? 2 : exitOf(records);
}
