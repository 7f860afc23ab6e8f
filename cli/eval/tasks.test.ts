import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTask, loadTasks } from './tasks.js';
import { tempDir } from '../../test/helpers/temp.js';

const shipped = fileURLToPath(new URL('../../examples/evals', import.meta.url));
const root = tempDir('bridle-tasks-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

function task(name: string, body: unknown, ws = true): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  if (ws) mkdirSync(join(dir, 'workspace'), { recursive: true });
  writeFileSync(join(dir, 'task.json'), typeof body === 'string' ? body : JSON.stringify(body));
  return dir;
}

describe('eval tasks', () => {
  it('the two shipped tasks load: the demo project as workspace, a check, hidden check files, scripted answers', () => {
    const tasks = loadTasks(shipped);
    expect(tasks.map((t) => t.name)).toEqual(['cart-remove', 'flaky-checkout']);
    for (const t of tasks) {
      expect(t.workspace).toBe(fileURLToPath(new URL('../../examples/flaky-checkout/project', import.meta.url)));
      expect(t.checkFiles).toBe(join(shipped, t.name, 'check'));
      expect(t.script).toBe(join(shipped, t.name, 'scripted.json'));
    }
  });

  it('a folder holding a task.json is one task', () => {
    expect(loadTasks(join(shipped, 'flaky-checkout')).map((t) => t.name)).toEqual(['flaky-checkout']);
  });

  it('refuses, in one line naming the file: an unknown key, a missing check, a missing workspace, a bad name, an empty folder', () => {
    expect(() => loadTask(task('typo', { prompt: 'p', check: 'true', chek: 1 }))).toThrow(/typo\/task\.json: \(top level\): Unrecognized key: "chek"/);
    expect(() => loadTask(task('nocheck', { prompt: 'p' }))).toThrow(/nocheck\/task\.json: check:/);
    expect(() => loadTask(task('nows', { prompt: 'p', check: 'true' }, false))).toThrow(/nows\/task\.json: workspace: no such folder/);
    expect(() => loadTask(task('bad.name', { prompt: 'p', check: 'true' }))).toThrow(/folder name may hold only/);
    expect(() => loadTask(task('notjson', '{'))).toThrow(/notjson\/task\.json:/);
    mkdirSync(join(root, 'empty'));
    expect(() => loadTasks(join(root, 'empty'))).toThrow(/holds no task/);
  });
});
