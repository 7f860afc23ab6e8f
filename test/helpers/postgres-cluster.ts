/**
 * A throwaway Postgres cluster from Debian's `postgresql` binaries (`initdb`,
 * `pg_ctl`, on the lookup path or under `/usr/lib/postgresql/<version>/bin`):
 * a temp directory, a unix socket there and no TCP listener, run as `nobody`
 * when this process is root (Postgres refuses to run as root). For the tests
 * (`postgres.ts`) and the benchmarks; no test framework here.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findCommand } from './system-deps.js';

/** The directory holding `initdb` and `pg_ctl`: the lookup path first, then Debian's versioned directories, newest first. */
export function findPostgresBin(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const onPath = findCommand('initdb', env);
  if (onPath) return path.dirname(onPath);
  // A lookup path set for a test shows what a machine without the packages sees: nothing else is searched then.
  if (env.BRIDLE_SYSTEM_DEPS_PATH !== undefined) return undefined;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (existsSync(path.join(root, v, 'bin', 'initdb'))) return path.join(root, v, 'bin');
  return undefined;
}

export interface ThrowawayPostgres {
  /** The cluster's `postgres` database, over its unix socket. */
  url: string;
  dir: string;
  stop(): void;
}

/** Contract: a running cluster owned by this process, or a throw carrying initdb's or pg_ctl's output. */
export function startThrowawayPostgres(bin: string): ThrowawayPostgres {
  const dir = mkdtempSync(path.join(tmpdir(), 'bridle-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) chownSync(dir, 65534, 65534);
  const run = (tool: string, args: string[]) => {
    const cmd = asRoot ? 'runuser' : path.join(bin, tool);
    const argv = asRoot ? ['-u', 'nobody', '--', path.join(bin, tool), ...args] : args;
    const r = spawnSync(cmd, argv, { encoding: 'utf8', cwd: dir, timeout: 60_000 });
    if (r.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout || r.error?.message}`);
  };
  const data = path.join(dir, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'bridle', '-E', 'UTF8', '--no-locale', '--no-sync']);
  run('pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', '-o', `-c listen_addresses='' -c unix_socket_directories='${dir}' -c max_connections=200 -c fsync=on`, 'start']);
  let stopped = false;
  return {
    url: `postgresql://bridle@localhost/postgres?host=${encodeURIComponent(dir)}`,
    dir,
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {}
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `url` with another database. */
export function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

