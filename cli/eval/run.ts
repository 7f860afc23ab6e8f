/**
 * `bridle eval <dir>`: each task N times, each run a session of its own (its
 * own log, `<eval>.<task>.<run>`) on a fresh copy of the task's workspace,
 * the prompt as one turn, then the task's check in that workspace. The
 * figures are read back from the log as written, by the function
 * `--replay` uses too.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionCrashedError } from '../../runtime/session-fault.js';
import { openSession } from '../open-session.js';
import { verifyFile } from '../verify-log.js';
import type { Product } from '../settings.js';
import { runCheck } from './check.js';
import { runSessionId, scoreEntries, type RunRecord } from './score.js';
import type { Task } from './tasks.js';
import { copyTaskFolder } from './workspace-roots.js';

export interface EvalPlan {
  evalId: string;
  tasks: readonly Task[];
  runs: number;
  /** The product each task runs under (its model may be the task's own script). */
  productFor: (task: Task) => Promise<Product>;
  /** Keep each run's workspace (its path is in the log's `session/start`, for `--replay` to check again). */
  keep: boolean;
  /** One line per run as it ends, and the set-up lines. */
  progress: (line: string) => void;
  /** Set when the eval should stop after the current run (Ctrl-C); the current turn is cancelled. */
  signal?: AbortSignal;
}

export interface EvalRun {
  records: RunRecord[];
  /** What the runs' sandbox enforces (said once, as progress, when the first run opens). */
  sandboxLine?: string;
  cancelled: boolean;
}

const checkWord = (r: RunRecord) =>
  !r.check ? 'not checked' : r.check.passed ? 'check passed' : `check failed (${r.check.code ?? `exit ${r.check.exitCode}`})`;

export function progressLine(r: RunRecord, of: number): string {
  const end = r.outcome === 'completed' ? 'completed' : `ended ${r.outcome}${r.code ? ` (${r.code})` : ''}`;
  return `${r.task} run ${r.run}/${of}: turn ${end} in ${r.steps} step${r.steps === 1 ? '' : 's'}; ${checkWord(r)}${r.workspace ? `; workspace kept: ${r.workspace}` : ''}`;
}

/** Contract: a run whose turn fails or crashes is a record like any other, never a throw; set-up problems (a product that cannot mount) throw, workspaces removed. */
export async function runEval(plan: EvalPlan): Promise<EvalRun> {
  const records: RunRecord[] = [];
  let sandboxLine: string | undefined;
  for (const task of plan.tasks) {
    const product = await plan.productFor(task);
    for (let n = 1; n <= plan.runs; n++) {
      if (plan.signal?.aborted) return { records, ...(sandboxLine ? { sandboxLine } : {}), cancelled: true };
      const ws = realpathSync(mkdtempSync(join(tmpdir(), `bridle-eval-${task.name}-`)));
      let kept = false;
      try {
        copyTaskFolder(task.workspace, ws);
        const opened = await openSession({ product, cwd: ws, id: runSessionId(plan.evalId, task.name, n) });
        opened.start();
        if (sandboxLine === undefined) {
          // Said once, for every run: each has a workspace of its own.
          sandboxLine = opened.sandboxLine.split(ws).join("each run's workspace");
          plan.progress(sandboxLine);
        }
        const cancel = () => void opened.session.cancel('user');
        plan.signal?.addEventListener('abort', cancel, { once: true });
        let note: string | undefined;
        try {
          await opened.session.run(task.prompt).catch((err: unknown) => {
            if (!(err instanceof SessionCrashedError)) throw err;
            note = `the session crashed: ${err.message}`;
          });
        } finally {
          plan.signal?.removeEventListener('abort', cancel);
          await opened.session.close().catch((err: unknown) => (note ??= `closing the log failed: ${(err as Error).message}`));
        }
        const { verdict, entries } = verifyFile(opened.logPath);
        const score = scoreEntries(entries);
        if (!verdict.ok) note ??= `the log does not verify: ${verdict.violations[0]!.message}`;
        const check = await runCheck(task, ws, product);
        kept = plan.keep;
        const record: RunRecord = { task: task.name, run: n, log: opened.logPath, ...score, check, ...(note ? { note } : {}), ...(kept ? { workspace: ws } : {}) };
        records.push(record);
        plan.progress(progressLine(record, plan.runs));
      } finally {
        if (!kept) rmSync(ws, { recursive: true, force: true });
      }
    }
  }
  return { records, ...(sandboxLine ? { sandboxLine } : {}), cancelled: plan.signal?.aborted ?? false };
}
