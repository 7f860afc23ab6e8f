/**
 * Connections to a Postgres store: one pool per URL in this process, shared
 * by every session that names it (so many sessions' commits share the
 * database's group commit through a few connections), created on first use.
 *
 * `pg` is imported when the first pool is made, not when bridle starts: a
 * session on the JSONL store never loads it. Pools let the process exit when
 * their connections are idle (`allowExitOnIdle`), so a command ends without
 * closing them; `closePostgresPools` ends them for tests and benchmarks.
 */
import { redactUrl as redactSecretsOfUrl } from '../../safety/redact.js';
import { importFor } from '../optional-packages.js';

/**
 * What bridle uses of a `pg` pool, declared here: bridle's published types must not need `@types/pg`
 * (a library user who never touches Postgres should not have to install it).
 */
export interface PgResult<R> {
  rows: R[];
  rowCount: number | null;
}
export interface PgQueryable {
  query<R = any>(text: string, values?: unknown[]): Promise<PgResult<R>>;
}
export interface PgClient extends PgQueryable {
  release(): void;
}
export interface Pool extends PgQueryable {
  connect(): Promise<PgClient>;
  end(): Promise<void>;
}

export class StoreUnavailableError extends Error {
  readonly code = 'STORE_UNAVAILABLE';
  constructor(
    readonly location: string,
    message: string,
    /** The driver's or the system's code behind it (`ECONNREFUSED`, `28P01`, `3D000`). */
    readonly sysCode?: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot reach the session store ${location}: ${message}`, options);
    this.name = 'StoreUnavailableError';
  }
}

/** The URL as messages and log locations show it: never its password (the one redaction helper, `safety/redact.ts`), nor a fragment. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(redactSecretsOfUrl(url));
    u.hash = '';
    return u.toString().replaceAll('%2A%2A%2A', '***');
  } catch {
    return 'postgres://(an unparsable URL)';
  }
}

export const isPostgresUrl = (s: string): boolean => /^postgres(ql)?:\/\//.test(s);

const pools = new Map<string, Promise<Pool>>();

/** Contract: resolves with the one pool for `url` in this process (its size the first caller's); never connects by itself. */
export function poolFor(url: string, size: number): Promise<Pool> {
  let p = pools.get(url);
  if (!p) {
    p = importFor('the Postgres store', () => import('pg')).then(({ default: pg }) => {
      const pool = new pg.Pool({ connectionString: url, max: size, allowExitOnIdle: true });
      // An idle connection the server drops (a restart, pg_terminate_backend) is replaced on next use; unheard, it would crash the process.
      pool.on('error', () => undefined);
      return pool as unknown as Pool;
    });
    pools.set(url, p);
  }
  return p;
}

/** Ends every pool this process opened (tests, benchmarks); the next use opens a new one. */
export async function closePostgresPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.allSettled(all.map(async (p) => (await p).end()));
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'ENOENT', '28P01', '28000', '3D000', '57P03']);

/** A failure to connect (refused, unknown host, bad password, no such database) as one named error; anything else as it is. */
export function asUnavailable(err: unknown, location: string): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !UNREACHABLE.has(code)) {
    // AggregateError: every address of a host refused (localhost: ::1 and 127.0.0.1).
    const inner = (err as { errors?: unknown[] } | null)?.errors?.[0];
    return inner !== undefined && err instanceof AggregateError ? asUnavailable(inner, location) : err;
  }
  return new StoreUnavailableError(location, (err as Error).message || code, code, { cause: err });
}
