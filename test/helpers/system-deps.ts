/**
 * Tests that need a system package (bubblewrap, Debian's chromium, later
 * postgres) go through here, so one rule decides for all of them: with the
 * package they run; without it they are skipped and say in one line how to
 * install it — unless system dependencies are required (CI), and then they
 * fail instead, so CI can never pass by skipping them.
 *
 * Required when `BRIDLE_REQUIRE_SYSTEM_DEPS=1` (`.ci/run` sets it), or when
 * `CI` is set and `BRIDLE_REQUIRE_SYSTEM_DEPS` is not `0`. The lookup searches
 * `BRIDLE_SYSTEM_DEPS_PATH` when set, else `PATH`: pointing it at an empty
 * directory shows what a machine without the packages sees.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'vitest';

export interface SystemDep {
  /** The executable the tests run, looked up by name. */
  command: string;
  /** The Debian package that has it, named to whoever lacks it. */
  package: string;
}

export const SYSTEM_DEPS = {
  bwrap: { command: 'bwrap', package: 'bubblewrap' },
  chromium: { command: 'chromium', package: 'chromium' },
  unshare: { command: 'unshare', package: 'util-linux' },
} as const satisfies Record<string, SystemDep>;

export type SystemDepVerdict =
  | { kind: 'run'; path: string }
  | { kind: 'skip'; line: string }
  | { kind: 'fail'; line: string };

const on = (v: string | undefined) => v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false';

/** Contract: pure on `env`; whether a missing system package fails the run instead of skipping its tests. */
export function systemDepsRequired(env: NodeJS.ProcessEnv): boolean {
  const forced = env.BRIDLE_REQUIRE_SYSTEM_DEPS;
  if (forced !== undefined && forced !== '') return on(forced);
  return on(env.CI);
}

/** The absolute path of `command` in the lookup path, or undefined. */
export function findCommand(command: string, env: NodeJS.ProcessEnv): string | undefined {
  const dirs = (env.BRIDLE_SYSTEM_DEPS_PATH ?? env.PATH ?? '').split(path.delimiter);
  for (const dir of dirs) {
    if (dir === '') continue;
    const file = path.resolve(dir, command);
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {
      // not here; try the next directory
    }
  }
  return undefined;
}

/** Contract: never throws; run (with the executable's path), skip or fail, each with the one line a person needs. */
export function systemDepVerdict(what: string, dep: SystemDep, env: NodeJS.ProcessEnv = process.env): SystemDepVerdict {
  const found = findCommand(dep.command, env);
  if (found) return { kind: 'run', path: found };
  const how = `install ${dep.package}: apt-get install ${dep.package}`;
  return systemDepsRequired(env)
    ? { kind: 'fail', line: `"${what}" needs ${dep.command}, which is not installed, and system dependencies are required here (CI, BRIDLE_REQUIRE_SYSTEM_DEPS=1): ${how}` }
    : { kind: 'skip', line: `skipped "${what}": ${dep.command} is not installed (${how})` };
}

/**
 * A `describe` whose tests need `dep`: `body` receives the executable's path.
 * Skipped, it prints its one line and registers the tests as skipped; failed,
 * it registers one failing test carrying that line, and none of `body`.
 */
export function describeWithSystemDep(title: string, dep: SystemDep, body: (executable: string) => void, env: NodeJS.ProcessEnv = process.env): void {
  const verdict = systemDepVerdict(title, dep, env);
  if (verdict.kind === 'run') {
    describe(title, () => body(verdict.path));
  } else if (verdict.kind === 'skip') {
    console.warn(verdict.line);
    describe.skip(title, () => body(dep.command));
  } else {
    describe(title, () => {
      it(`needs ${dep.command}`, () => {
        throw new Error(verdict.line);
      });
    });
  }
}

/** What a test that runs a command as another user needs that user to reach: the node binary and the files it runs. */
export type ReachVerdict = { kind: 'run' } | { kind: 'skip'; line: string } | { kind: 'fail'; line: string };

/**
 * Whether `user` can run `node <file>` for each file — every directory on the
 * way searchable, the files readable — asked of the kernel by running node as
 * that user. A checkout in a private directory (a container's `/root`, any
 * `mktemp -d`) cannot be reached by `nobody`: such a test is skipped with one
 * line saying why, or fails with that line where system dependencies are
 * required (CI), so CI cannot pass by skipping it.
 * Contract: never throws.
 */
export function reachableAs(what: string, user: { uid: number; gid: number }, files: string[], env: NodeJS.ProcessEnv = process.env): ReachVerdict {
  const probe = `for (const f of JSON.parse(process.argv[1])) require('node:fs').accessSync(f, require('node:fs').constants.R_OK)`;
  const r = spawnSync(process.execPath, ['-e', probe, JSON.stringify(files)], { uid: user.uid, gid: user.gid, encoding: 'utf8', timeout: 10_000 });
  if (r.status === 0) return { kind: 'run' };
  const why = `uid ${user.uid} cannot reach ${r.error ? process.execPath : files.join(', ')} (a directory on the way is private to its owner; ${(r.error?.message ?? r.stderr.split('\n').find((l) => /^Error|EACCES/.test(l)) ?? `exit ${r.status}`).trim()})`;
  return systemDepsRequired(env)
    ? { kind: 'fail', line: `"${what}" runs bridle as another user, and ${why}; move the checkout somewhere that user can read` }
    : { kind: 'skip', line: `skipped "${what}": ${why}` };
}
