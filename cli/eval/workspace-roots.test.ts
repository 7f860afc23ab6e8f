/**
 * A task's workspace may name any folder, and the whole folder is copied
 * where the model reads it (issue 20 item 7): `/etc`, `../..` and links out
 * are refused unless they lie in a root the user controls, and the copy never
 * reads through a link.
 */
import { lstatSync, readdirSync, mkdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../errors.js';
import { loadTasks } from './tasks.js';
import { copyTaskFolder, repositoryOf } from './workspace-roots.js';
import { tempDir } from '../../test/helpers/temp.js';

let root: string;
/** A task set in a folder that is no repository, with a secret folder beside it. */
let set: string;
let secret: string;
beforeEach(() => {
  root = realpathSync(tempDir('bridle-roots-'));
  set = join(root, 'evals');
  secret = join(root, 'dot-ssh');
  mkdirSync(secret);
  writeFileSync(join(secret, 'id_rsa'), 'PRIVATE KEY');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function task(name: string, workspace?: string): string {
  const dir = join(set, name);
  mkdirSync(join(dir, 'workspace'), { recursive: true });
  writeFileSync(join(dir, 'task.json'), JSON.stringify({ prompt: 'p', check: 'true', ...(workspace !== undefined ? { workspace } : {}) }));
  return dir;
}
const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    if (err instanceof UsageError) return err.message;
    throw err;
  }
  return 'loaded';
};

describe('eval task workspaces stay inside a root the user controls', () => {
  it('refuses an absolute workspace (/etc) and a ../.. one outside the task set, naming the path', () => {
    task('abs', '/etc');
    expect(refusal(() => loadTasks(join(set, 'abs')))).toMatch(/abs\/task\.json: workspace: \/etc is outside the folders a task may copy from/);
    const up = task('up', '../../dot-ssh');
    expect(refusal(() => loadTasks(up))).toContain(`workspace: ${secret} is outside`);
  });

  it('refuses a workspace that is a link out of the task set, saying where it leads', () => {
    const dir = task('linked', 'ws-link');
    symlinkSync(secret, join(dir, 'ws-link'));
    expect(refusal(() => loadTasks(set))).toContain(`ws-link (it resolves to ${secret}) is outside`);
    rmSync(join(dir, 'check'), { force: true });
    symlinkSync(secret, join(dir, 'check'));
    writeFileSync(join(dir, 'task.json'), JSON.stringify({ prompt: 'p', check: 'true' }));
    expect(refusal(() => loadTasks(set))).toContain('task.json: check:');
  });

  it('takes a folder named with --workspace-root, and by default the git repository the task set is in', () => {
    task('up', '../../dot-ssh');
    expect(loadTasks(set, [secret])[0]!.workspace).toBe(secret);
    expect(refusal(() => loadTasks(set, [join(root, 'nowhere')]))).toMatch(/--workspace-root: no such folder/);
    mkdirSync(join(root, '.git'));
    expect(repositoryOf(set)).toBe(root);
    expect(loadTasks(set)[0]!.workspace).toBe(secret);
    // A root named on the command line replaces the repository default.
    expect(refusal(() => loadTasks(set, [set]))).toContain('is outside');
  });

  it('the shipped tasks still load (their workspace is the demo project in the same repository)', () => {
    const shipped = new URL('../../examples/evals', import.meta.url).pathname;
    expect(loadTasks(shipped).map((t) => t.name)).toEqual(['cart-remove', 'flaky-checkout']);
  });

  it('copies links as links, targets verbatim: a link to /etc or to a secret brings no file in, and an in-tree link points into the copy (cpSync rewrote it to the source task folder)', () => {
    const from = join(root, 'from');
    mkdirSync(join(from, 'src'), { recursive: true });
    writeFileSync(join(from, 'src/a.txt'), 'a');
    symlinkSync('/etc', join(from, 'etc'));
    symlinkSync(secret, join(from, 'keys'));
    symlinkSync('src/a.txt', join(from, 'alias'));
    const to = join(root, 'to');
    mkdirSync(to);
    copyTaskFolder(from, to);
    expect(lstatSync(join(to, 'etc')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(to, 'etc'))).toBe('/etc');
    expect(lstatSync(join(to, 'keys')).isSymbolicLink()).toBe(true);
    // The in-tree link still reads inside the copy, not the source.
    expect(readlinkSync(join(to, 'alias'))).toBe('src/a.txt');
    expect(readFileSync(join(to, 'alias'), 'utf8')).toBe('a');
    // What the copy holds as files of its own (links not followed): only the one regular file.
    // Walked by hand: Node 22's recursive readdir descends into linked directories (the link to /etc), Node 20's does not.
    const filesIn = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesIn(join(dir, e.name)) : e.isFile() ? [e.name] : []));
    expect(filesIn(to)).toEqual(['a.txt']);
  });
});
