/**
 * A task's check, run after the turn in the run's workspace, confined as the
 * run's own commands were: the product's `sandbox` and `subprocess` rows
 * (so `--sandbox`, `--sandbox-mode`, `--allow-network` and the config file
 * mean the same here as for `bridle run`), mounted on a host of their own
 * whose workspace is the one checked. A sandbox that cannot confine the
 * command fails the check closed; it never runs unconfined.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SUBPROCESS } from '../../ports/index.js';
import type { SessionControl } from '../../ports/session.js';
import { ToolError } from '../../ports/tool-error.js';
import { buildHost } from '../../runtime/host.js';
import type { Product } from '../settings.js';
import type { CheckResult } from './score.js';
import { CHECK_DIR, type Task } from './tasks.js';
import { copyTaskFolder } from './workspace-roots.js';
import { BuiltinCode } from '../../tools/output.js';

const TAIL_LINES = 20;
const tail = (s: string) => s.split('\n').slice(-TAIL_LINES).join('\n').trimEnd();

/** A session control for a host that only runs commands: it has no log. */
function checkControl(workspace: string, home: string): SessionControl {
  const none = (): never => {
    throw new Error('an eval check runs a command, not a session: it has no children');
  };
  return { id: 'eval-check', depth: 0, cwd: workspace, bridleHome: home, inject: () => undefined, entries: () => [], record: () => undefined, child: none };
}

/**
 * Contract: never rejects for the check's own failure (a non-zero exit, a
 * timeout, a sandbox that refuses it: all `passed: false`, with the code);
 * rejects only for a product that cannot mount its sandbox or subprocess row.
 */
export async function runCheck(task: Task, workspace: string, product: Product, clock: () => number = performance.now.bind(performance)): Promise<CheckResult> {
  if (task.checkFiles) {
    const into = join(workspace, CHECK_DIR);
    if (existsSync(into)) rmSync(into, { recursive: true, force: true });
    copyTaskFolder(task.checkFiles, into);
  }
  const rows = product.rows.filter((r) => r.id === 'sandbox' || r.id === 'subprocess');
  const { host } = buildHost(rows, { session: checkControl(workspace, product.home), loaded: product.loaded });
  const started = clock();
  try {
    const subprocess = host.get(SUBPROCESS);
    const spec = subprocess.resolve({ argv: ['bash', '-c', task.check], timeoutMs: task.checkTimeoutMs });
    const r = await subprocess.run(spec, new AbortController().signal);
    const output = tail([r.stdout, r.stderr].filter(Boolean).join('\n'));
    const ms = Math.round(clock() - started);
    if (r.timedOut) return { exitCode: null, passed: false, code: 'TIMEOUT', ms, output };
    return { exitCode: r.exitCode, passed: r.exitCode === 0, ...(r.exitCode === null ? { code: `SIGNAL ${r.signal ?? ''}`.trim() } : {}), ms, output };
  } catch (err) {
    const code = err instanceof ToolError ? err.code : BuiltinCode.SPAWN_FAILED;
    return { exitCode: null, passed: false, code, ms: Math.round(clock() - started), output: (err as Error).message };
  } finally {
    host.dispose();
  }
}
