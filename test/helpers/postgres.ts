/**
 * Postgres for the tests that need one (ADR 0025): `BRIDLE_TEST_PG_URL` when
 * it is set (a server someone runs), else a throwaway cluster this helper
 * starts from Debian's `postgresql` binaries (`initdb`, `pg_ctl`, found on
 * the lookup path or under `/usr/lib/postgresql/<version>/bin`) in a temp
 * directory, listening on a unix socket there only, never on the network.
 * As root (CI), the cluster runs as `nobody`: Postgres refuses to run as
 * root. Each suite gets a database of its own, so files running at once
 * never see each other's sessions.
 *
 * Without either, the suites skip naming the package, or fail when system
 * dependencies are required (CI), as `system-deps.ts` decides for all.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { findCommand, systemDepsRequired } from './system-deps.js';

export const POSTGRES_DEP = { command: 'initdb', package: 'postgresql' } as const;

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

/** Runs one SQL statement through `psql`-free means: the test's own `pg`. */
async function sql(url: string, text: string): Promise<void> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

export type PostgresVerdict = { kind: 'url'; url: string } | { kind: 'start'; bin: string } | { kind: 'skip'; line: string } | { kind: 'fail'; line: string };

/** Contract: pure on `env` and the file system; where the suite's Postgres comes from, or why there is none. */
export function postgresVerdict(what: string, env: NodeJS.ProcessEnv = process.env): PostgresVerdict {
  if (env.BRIDLE_TEST_PG_URL) return { kind: 'url', url: env.BRIDLE_TEST_PG_URL };
  const bin = findPostgresBin(env);
  if (bin) return { kind: 'start', bin };
  const how = `install postgresql: apt-get install postgresql, or set BRIDLE_TEST_PG_URL to a database bridle may create databases in`;
  return systemDepsRequired(env)
    ? { kind: 'fail', line: `"${what}" needs Postgres (initdb), which is not installed, and system dependencies are required here (CI, BRIDLE_REQUIRE_SYSTEM_DEPS=1): ${how}` }
    : { kind: 'skip', line: `skipped "${what}": Postgres (initdb) is not installed (${how})` };
}

/** What a suite's body gets: its own database's URL (valid inside tests and hooks), and the server's. */
export interface SuiteDatabase {
  url(): string;
  /** A further fresh database on the same server (a test that needs an empty one). */
  fresh(): Promise<string>;
}

/**
 * A `describe` whose tests need Postgres: skipped (one line naming the package), failed in CI, or run against a
 * database of its own on `BRIDLE_TEST_PG_URL`'s server or on a throwaway cluster started for this file.
 */
export function describeWithPostgres(title: string, body: (db: SuiteDatabase) => void, env: NodeJS.ProcessEnv = process.env): void {
  const verdict = postgresVerdict(title, env);
  if (verdict.kind === 'skip') {
    console.warn(verdict.line);
    describe.skip(title, () => body({ url: () => '', fresh: async () => '' }));
    return;
  }
  if (verdict.kind === 'fail') {
    describe(title, () => {
      it('needs Postgres', () => {
        throw new Error(verdict.line);
      });
    });
    return;
  }
  describe(title, () => {
    let server: string | undefined;
    let cluster: ThrowawayPostgres | undefined;
    let mine: string | undefined;
    const created: string[] = [];
    const fresh = async () => {
      const name = `bridle_test_${randomBytes(6).toString('hex')}`;
      await sql(server!, `CREATE DATABASE ${name} ENCODING 'UTF8' TEMPLATE template0`);
      created.push(name);
      return withDatabase(server!, name);
    };
    beforeAll(async () => {
      if (verdict.kind === 'start') cluster = startThrowawayPostgres(verdict.bin);
      server = verdict.kind === 'url' ? verdict.url : cluster!.url;
      mine = await fresh();
    }, 120_000);
    afterAll(async () => {
      const { closePostgresPools } = await import('../../adapters/store/postgres-pool.js');
      await closePostgresPools();
      if (cluster) cluster.stop();
      else for (const name of created) await sql(server!, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    }, 60_000);
    body({ url: () => mine!, fresh });
  });
}

