/**
 * `npm run demo:bootstrap`: one self-edit round, scripted (Coderlet's
 * bootstrap, issue #15). On a disposable copy of this repository, bridle —
 * driven by a scripted model, canned answers labelled as such — uses its
 * ordinary tools to inspect one of its own mechanisms (the glob tool's
 * presenter, which gives each call its line in the transcript), changes it,
 * and runs bridle's tests for it in the copy. The copy is then built, and a
 * second run, of the bridle built from the copy, shows the changed
 * behaviour in its transcript. This repository never changes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findBwrap } from '../../adapters/sandbox/bwrap.js';

/** What the copy leaves out: dependencies (linked or copied below), build output, local state. */
const LEFT_OUT = new Set(['node_modules', 'dist', 'coverage', '.bridle', '.vitest-report.json']);

export interface Round {
  /** The round's transcript (the CLI's stdout) and its stderr. */
  stdout: string;
  stderr: string;
  code: number | null;
  /** The log the round's `log:` line names. */
  log?: string;
}

export interface BootstrapResult {
  copy: string;
  rounds: [Round, Round];
  code: number;
}

/** The repository's root, whether this runs from `dist/` or from source. */
export function repoRoot(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  return join(here, here.includes(`${sep}dist${sep}`) ? '../../..' : '../..');
}

const exampleDir = (repo: string) => join(repo, 'examples', 'bootstrap');

/** Commands run by bwrap see a private /tmp: a link from the copy into a real /tmp would lead nowhere there. */
const hiddenBySandbox = (path: string) => path === '/tmp' || path.startsWith('/tmp/');

/** `git status --porcelain` of the repository, or null outside a git checkout. */
export function gitStatus(dir: string): string | null {
  const r = spawnSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: dir, encoding: 'utf8' });
  return r.status === 0 ? r.stdout : null;
}

/** The copy's changes against the index it was copied with: the round's edits (and any this checkout had not committed). */
function changes(copy: string): string {
  const r = spawnSync('git', ['--no-pager', 'diff', '--stat'], { cwd: copy, encoding: 'utf8' });
  return r.status === 0 ? r.stdout : `(git diff did not run: ${r.error?.message ?? r.stderr.trim()})\n`;
}

function run(argv: string[], o: { cwd: string; env: NodeJS.ProcessEnv; echo: boolean }): Promise<Round> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { cwd: o.cwd, env: o.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d;
      if (o.echo) process.stdout.write(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
      if (o.echo) process.stderr.write(d);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const log = /^log: (.+)$/m.exec(stderr)?.[1];
      resolve({ stdout, stderr, code, ...(log ? { log } : {}) });
    });
  });
}

/** Contract: writes only inside a new temporary directory (and the logs in $BRIDLE_HOME); the repository is read, never written. */
export async function runBootstrap(o: { repo?: string; env?: NodeJS.ProcessEnv; say?: (s: string) => void; echo?: boolean } = {}): Promise<BootstrapResult> {
  const repo = realpathSync(o.repo ?? repoRoot());
  const env = o.env ?? process.env;
  const say = o.say ?? ((s: string) => process.stderr.write(s));
  const echo = o.echo ?? true;
  const before = gitStatus(repo);
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'bridle-bootstrap-')));
  const copy = join(root, 'bridle');
  // The working tree as it is, .git included (so `git diff` in the copy shows the round's change), less what is rebuilt or local.
  cpSync(repo, copy, { recursive: true, verbatimSymlinks: true, filter: (src) => !LEFT_OUT.has(relative(repo, src).split(sep)[0]!) });
  const modules = realpathSync(join(repo, 'node_modules'));
  const confined = !('missing' in findBwrap(env, copy));
  let how: string;
  if (confined && hiddenBySandbox(modules)) {
    cpSync(modules, join(copy, 'node_modules'), { recursive: true, verbatimSymlinks: true });
    how = "node_modules copied: this checkout's lies under /tmp, which sandboxed commands see as a private, empty /tmp";
  } else {
    symlinkSync(modules, join(copy, 'node_modules'));
    how = "node_modules linked to this checkout's";
  }
  say(
    'bridle bootstrap demo: a scripted model (canned answers from examples/bootstrap/round-1.json and round-2.json, not a live model)\n' +
      `works on bridle itself, in a disposable copy of this repository: ${copy} (${how}).\n` +
      (confined
        ? 'Its shell commands run in the bubblewrap sandbox: they can write only in that copy and a private /tmp, with no network.\n'
        : 'bubblewrap is not installed, so its shell commands run UNCONFINED (with your permissions) in that copy.\n'),
  );
  const scripts = exampleDir(repo);
  const common = ['--cwd', copy, '--approval', 'auto', '--sandbox', confined ? 'bwrap' : 'off'];

  say("\n── round 1: bridle (this checkout) on the copy: inspect the glob tool's presenter, change it, run its tests ──\n");
  const first = await run(
    [join(repo, 'dist/cli/main.js'), 'run', "Look at how the glob tool's calls are shown in the transcript, make its pattern unambiguous, and run glob's tests.", '--model', `scripted:${join(scripts, 'round-1.json')}`, ...common],
    { cwd: copy, env, echo },
  );
  if (first.code !== 0) return { copy, rounds: [first, { stdout: '', stderr: '', code: null }], code: first.code ?? 1 };

  say('\n── the copy is built (tsc -p tsconfig.build.json, in the copy) ──\n');
  const build = await run([join(copy, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: copy, env, echo });
  if (build.code !== 0) return { copy, rounds: [first, build], code: build.code ?? 1 };

  say('\n── round 2: the bridle built from the copy, on the copy: its transcript shows the changed presenter ──\n');
  const second = await run([join(copy, 'dist/cli/main.js'), 'run', 'list the tool sources', '--model', `scripted:${join(scripts, 'round-2.json')}`, ...common], { cwd: copy, env, echo });
  say(`\n── what changed in the copy (git diff) ──\n${changes(copy)}`);
  say(`\nround 1 log: ${first.log ?? '(none)'}\nround 2 log: ${second.log ?? '(none)'}\n`);
  const after = gitStatus(repo);
  if (before !== after) {
    say(`this repository CHANGED while the demo ran (git status before and after differ): ${repo}\n`);
    return { copy, rounds: [first, second], code: 1 };
  }
  say(`this repository is unchanged (${before === null ? 'not a git checkout: not checked' : 'git status the same before and after'}): ${repo}; the copy stays at ${copy}.\n`);
  return { copy, rounds: [first, second], code: second.code ?? 1 };
}

if (process.argv[1] && existsSync(process.argv[1]) && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = (await runBootstrap()).code;
}
