/**
 * An eval's tasks, one folder each (ADR 0026):
 *
 *   <task>/task.json      { prompt, check, checkTimeoutMs?, workspace?, description? }
 *   <task>/workspace/     the files the run starts from (or `workspace` names another folder,
 *                         inside the task set or a root the user names: workspace-roots.ts)
 *   <task>/check/         optional: copied into the workspace as `.bridle-eval/` after the turn, for the check
 *   <task>/scripted.json  optional: the answers `--model scripted` gives (adapters/model/SCRIPTED.md)
 *
 * The check is a bash command run in the workspace, in the sandbox, after the
 * turn; exit 0 passes. The folder named on the command line is either one
 * task or a folder of them.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { UsageError } from '../errors.js';
import { confineToRoots, workspaceRoots } from './workspace-roots.js';

export const TASK_FILE = 'task.json';
/** Where a task's `check/` files land in the workspace, out of the way of the project's own. */
export const CHECK_DIR = '.bridle-eval';
export const TASK_NAME = /^[A-Za-z0-9_-]+$/;

export const TaskFile = z.strictObject({
  prompt: z.string().min(1),
  /** A bash command run in the workspace after the turn; exit 0 passes. */
  check: z.string().min(1),
  checkTimeoutMs: z.int().positive().max(600_000).default(120_000),
  /** The folder the run starts from, relative to the task's folder. */
  workspace: z.string().min(1).default('workspace'),
  description: z.string().optional(),
});

export interface Task {
  name: string;
  dir: string;
  prompt: string;
  check: string;
  checkTimeoutMs: number;
  workspace: string;
  /** `check/`, when the task has one. */
  checkFiles?: string;
  /** `scripted.json`, when the task has one. */
  script?: string;
}

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

/**
 * Contract: throws one `UsageError` naming the file and the problem (a
 * workspace or check folder outside `roots` among them); never runs anything.
 * `roots`: where its folders may lie (`workspaceRoots`); default the task's
 * own folder and the repository it is in.
 */
export function loadTask(dir: string, roots: readonly string[] = workspaceRoots(dir, undefined)): Task {
  const name = resolve(dir).split('/').pop() ?? dir;
  if (!TASK_NAME.test(name)) throw new UsageError(`${dir}: a task's folder name may hold only letters, digits, - and _ (it names the task's logs)`);
  const file = join(dir, TASK_FILE);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`${file}: ${(err as Error).message}`);
  }
  const parsed = TaskFile.safeParse(data);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new UsageError(`${file}: ${i.path.join('.') || '(top level)'}: ${i.message}`);
  }
  const t = parsed.data;
  const workspace = resolve(dir, t.workspace);
  if (!isDir(workspace)) throw new UsageError(`${file}: workspace: no such folder: ${workspace}`);
  const from = confineToRoots(workspace, roots, `${file}: workspace`);
  const checkDir = join(dir, 'check');
  const checkFiles = isDir(checkDir) ? confineToRoots(checkDir, roots, `${file}: check`) : undefined;
  const script = join(dir, 'scripted.json');
  return {
    name,
    dir: resolve(dir),
    prompt: t.prompt,
    check: t.check,
    checkTimeoutMs: t.checkTimeoutMs,
    workspace: from,
    ...(checkFiles !== undefined ? { checkFiles } : {}),
    ...(existsSync(script) ? { script } : {}),
  };
}

/**
 * The folder's tasks, by name: the folder itself when it holds a `task.json`,
 * else each subfolder that does. `roots`: `--workspace-root`, if given.
 */
export function loadTasks(dir: string, named?: readonly string[]): Task[] {
  if (!isDir(dir)) throw new UsageError(`eval: no such folder: ${dir}`);
  const roots = workspaceRoots(dir, named);
  if (existsSync(join(dir, TASK_FILE))) return [loadTask(dir, roots)];
  const tasks = readdirSync(dir)
    .sort()
    .filter((n) => existsSync(join(dir, n, TASK_FILE)))
    .map((n) => loadTask(join(dir, n), roots));
  if (tasks.length === 0) throw new UsageError(`eval: ${dir} holds no task (a folder with a ${TASK_FILE})`);
  return tasks;
}
