/**
 * The numbers an eval prints, and where each comes from. Steps, tokens, time
 * and the turn's outcome are read from the run's log, by the same function
 * whether the run just happened or `--replay` reads it later; passes come
 * from the task's check command alone (exit 0). Nothing here is estimated.
 */
import type { Entry } from '../../log/entries.js';

/** What one run's log says about it. */
export interface LogScore {
  session: string;
  /** The model `session/start` logged: a live model's id, or `scripted:<file>`. */
  model: string;
  scripted: boolean;
  cwd: string;
  /** The first turn's input, as claimed. */
  prompt?: string;
  /** The last turn's end reason; `open` when a turn never ended, `none` when none started. */
  outcome: string;
  code?: string;
  /** Model requests: the steps the turns' `turn/end` counted (`step/start` entries while a turn is open). */
  steps: number;
  /** Summed over every answer that reported usage; null when none did (a scripted model reports none unless its script says). */
  tokens: { input: number; output: number } | null;
  /** From the first `turn/start` to the last `turn/end`, by the log's own clock (`at`). */
  ms: number | null;
}

export interface CheckResult {
  /** The check's exit code; null when it did not exit by itself (killed, timed out) or never ran. */
  exitCode: number | null;
  passed: boolean;
  /** Why the check did not run or did not finish: SANDBOX_UNAVAILABLE, TIMEOUT, … */
  code?: string;
  ms: number;
  /** The last lines of its output. */
  output: string;
}

/** One run, as the table and `--json` report it. */
export interface RunRecord extends LogScore {
  task: string;
  run: number;
  log: string;
  /** Null when no check ran (replay without the workspace); `note` says why. */
  check: CheckResult | null;
  note?: string;
  /** The run's workspace, when it was kept (`--keep`). */
  workspace?: string;
}

export const isScripted = (model: string) => /^scripted(:|$)/.test(model);

/** Contract: pure; total on any list of entries, even a cut or corrupt log's prefix. */
export function scoreEntries(entries: readonly Entry[]): LogScore {
  const start = entries[0]?.kind === 'session/start' ? entries[0] : undefined;
  let prompt: string | undefined;
  let outcome = 'none';
  let code: string | undefined;
  let steps = 0;
  let openSteps = 0;
  let reported = false;
  let input = 0;
  let output = 0;
  let first: number | undefined;
  let last: number | undefined;
  for (const e of entries) {
    if (e.kind === 'turn/start') {
      prompt ??= e.input;
      first ??= Date.parse(e.at);
      outcome = 'open';
      code = undefined;
      openSteps = 0;
    } else if (e.kind === 'step/start') openSteps++;
    else if (e.kind === 'assistant/message' && e.usage) {
      reported = true;
      input += e.usage.inputTokens;
      output += e.usage.outputTokens;
    } else if (e.kind === 'turn/end') {
      outcome = e.reason;
      code = e.code;
      steps += e.steps;
      openSteps = 0;
      last = Date.parse(e.at);
    }
  }
  steps += openSteps;
  const model = start?.model ?? 'unknown';
  return {
    session: start?.id ?? 'unknown',
    model,
    scripted: isScripted(model),
    cwd: start?.cwd ?? '',
    ...(prompt !== undefined ? { prompt } : {}),
    outcome,
    ...(code !== undefined ? { code } : {}),
    steps,
    tokens: reported ? { input, output } : null,
    ms: first !== undefined && last !== undefined ? last - first : null,
  };
}

/** A run's session id: `<eval>.<task>.<run>`, so a log names its task and run without any other file. */
export const runSessionId = (evalId: string, task: string, run: number) => `${evalId}.${task}.${run}`;

export function parseRunSessionId(id: string): { eval: string; task: string; run: number } | undefined {
  const m = /^(.+)\.([A-Za-z0-9_-]+)\.(\d+)$/.exec(id);
  return m ? { eval: m[1]!, task: m[2]!, run: Number(m[3]) } : undefined;
}

/** One row of the table. */
export interface TaskSummary {
  task: string;
  /** `scripted` for a scripted model (whatever its file), else the models the logs name. */
  model: string;
  scripted: boolean;
  runs: number;
  /** Runs whose check ran. */
  checked: number;
  passes: number;
  /** Medians over the runs. */
  steps: number;
  tokens: number | null;
  ms: number | null;
}

function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Contract: pure; one summary per task, in the order the runs first name them. */
export function summarize(runs: readonly RunRecord[]): TaskSummary[] {
  const byTask = new Map<string, RunRecord[]>();
  for (const r of runs) byTask.set(r.task, [...(byTask.get(r.task) ?? []), r]);
  return [...byTask].map(([task, rs]) => {
    const scripted = rs.every((r) => r.scripted);
    const models = [...new Set(rs.map((r) => (r.scripted ? 'scripted' : r.model)))];
    const withTokens = rs.flatMap((r) => (r.tokens ? [r.tokens.input + r.tokens.output] : []));
    return {
      task,
      model: models.join(', '),
      scripted,
      runs: rs.length,
      checked: rs.filter((r) => r.check).length,
      passes: rs.filter((r) => r.check?.passed).length,
      steps: median(rs.map((r) => r.steps)) ?? 0,
      tokens: median(withTokens),
      ms: median(rs.flatMap((r) => (r.ms !== null ? [r.ms] : []))),
    };
  });
}

const num = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));
const secs = (ms: number | null) => (ms === null ? '—' : `${(ms / 1000).toFixed(1)} s`);

/** The passes cell: `2/3`; runs whose check did not run are said apart, never counted as passes or failures. */
export function passesCell(s: TaskSummary): string {
  if (s.checked === s.runs) return `${s.passes}/${s.runs}`;
  if (s.checked === 0) return `not checked (${s.runs})`;
  return `${s.passes}/${s.checked} (${s.runs - s.checked} not checked)`;
}

/** Contract: pure; the table, one line per task, columns aligned, with the line saying what the numbers are. */
export function formatTable(summaries: readonly TaskSummary[]): string {
  const head = ['task', 'model', 'passes', 'steps', 'tokens', 'time'];
  const rows = summaries.map((s) => [s.task, s.model, passesCell(s), num(s.steps), s.tokens === null ? '—' : num(s.tokens), secs(s.ms)]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}

export const TABLE_NOTE =
  'passes: the task\'s check command, exit 0. steps, tokens, time: medians over the runs, read from each run\'s log (time: first turn/start to last turn/end; tokens: as the model reported them, — when it reported none).';
