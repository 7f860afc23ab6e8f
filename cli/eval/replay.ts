/**
 * `bridle eval --replay <logs...>`: re-scores runs from their logs alone. No
 * model is called and no tool runs. What re-scoring can honestly redo
 * (ADR 0026):
 *
 * - every log is verified as `bridle replay` verifies it; a corrupt one
 *   scores nothing and fails the command (exit 2);
 * - steps, tokens, time and the turn's outcome are recomputed from the log,
 *   by the same function a live eval uses, so they come out the same;
 * - the check, which the log cannot prove, runs again only where it can run
 *   against the workspace the run left: the task set is named (`<dir>`),
 *   the log's id names one of its tasks, the log answered that task's
 *   prompt, and the workspace in its `session/start` is still there (kept
 *   with `--keep`). Elsewhere the run is "not checked", neither a pass nor
 *   a failure, and the table says so.
 */
import { existsSync } from 'node:fs';
import { UsageError } from '../errors.js';
import { sessionPath } from '../home.js';
import { verifyFile } from '../verify-log.js';
import type { Product } from '../settings.js';
import { runCheck } from './check.js';
import { parseRunSessionId, scoreEntries, type RunRecord } from './score.js';
import type { Task } from './tasks.js';

export interface Rescored {
  records: RunRecord[];
  /** Logs that did not verify: named, never scored. */
  corrupt: { log: string; problem: string }[];
}

/** Contract: reads the logs and, where it may, runs checks; never calls a model or runs a tool. */
export async function rescoreLogs(logs: readonly string[], tasks: readonly Task[] | undefined, product: Product): Promise<Rescored> {
  const records: RunRecord[] = [];
  const corrupt: Rescored['corrupt'] = [];
  for (const arg of logs) {
    const log = sessionPath(product.home, arg);
    if (!existsSync(log)) throw new UsageError(`eval --replay: no session log at ${log}`);
    const { verdict, entries } = verifyFile(log);
    if (!verdict.ok) {
      const v = verdict.violations[0]!;
      corrupt.push({ log, problem: `${v.violation}: ${v.message}` });
      continue;
    }
    const score = scoreEntries(entries);
    const named = parseRunSessionId(score.session);
    const task = named && tasks?.find((t) => t.name === named.task);
    let note: string | undefined;
    let check: RunRecord['check'] = null;
    if (!named) note = 'not an eval run (its session id names no task)';
    else if (!tasks) note = 'not checked: no task set named';
    else if (!task) note = `not checked: the task set has no task ${named.task}`;
    else if (score.prompt !== task.prompt) note = `not checked: the log answered another prompt than task ${task.name}'s`;
    else if (!existsSync(score.cwd)) note = 'not checked: its workspace is gone (eval --keep keeps it)';
    else check = await runCheck(task, score.cwd, product);
    records.push({ task: named?.task ?? score.session, run: named?.run ?? 1, log, ...score, check, ...(note ? { note } : {}) });
  }
  return { records, corrupt };
}
