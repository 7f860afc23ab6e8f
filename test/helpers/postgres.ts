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
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { findPostgresBin, startThrowawayPostgres, withDatabase, type ThrowawayPostgres } from './postgres-cluster.js';
import { systemDepsRequired } from './system-deps.js';

export const POSTGRES_DEP = { command: 'initdb', package: 'postgresql' } as const;

/** Runs one SQL statement on a connection of its own (a test's look at the tables, CREATE or DROP DATABASE); its rows. */
export async function sqlRows<T = Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, values)).rows as T[];
  } finally {
    await c.end();
  }
}
const sql = (url: string, text: string) => sqlRows(url, text).then(() => undefined);

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

