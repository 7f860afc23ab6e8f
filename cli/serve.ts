/**
 * `bridle serve`: the WebSocket JSON-RPC server (docs/protocol.md) and the
 * session viewer, on loopback unless told otherwise. Each `session/create`
 * opens a session exactly as `bridle run` would (same workspace, model,
 * sandbox and approval flags); `--approval ask` asks the attached clients.
 * A client may point a session at `--cwd` or below (or an `--allow-cwd`);
 * at most `--max-sessions` are open, and one left idle is released.
 */
import type { InspectionEvent, Observer } from 'xstate';
import { isLoopbackHost, newToken } from '../server/access.js';
import { allowedRoots } from '../server/allowed-cwd.js';
import { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_SESSIONS } from '../server/hub-limits.js';
import { DEFAULT_PORT, startServer, type BridleServer } from '../server/server.js';
import { viewerDir, visualizationsDir } from '../visualizations/paths.js';
import { UsageError } from './errors.js';
import { announceListening, ListenError, listenOrExplain, parsePort as parsePortOr } from './listen.js';
import { inspectUrl, openInspector, type OpenInspector } from './inspect.js';
import { resolveWorkspace } from './open-session.js';
import { policyOf, type RunFlags } from './run.js';
import { relayOfRows } from '../runtime/stores.js';
import type { SessionRelay } from '../ports/relay.js';
import { presentBuiltin } from './render.js';
import { reopenStored, serveFork, serveOpener } from './serve-open.js';
import type { Product } from './settings.js';
import { visible } from './visible.js';
import { redactText, redactUrl } from '../safety/redact.js';
import { usageOfProduct } from './usage.js';

export interface ServeFlags extends RunFlags {
  port?: string;
  host?: string;
  allowOrigin?: string[];
  allowCwd?: string[];
  maxSessions?: string;
  idleTimeout?: string;
  /** Every how many ms to sweep the store for sessions a dead owner left with work (Postgres only; 0: never). */
  sweepMs?: string;
  inspect?: string | boolean;
  /** Exit (as on SIGTERM) when stdin ends: a parent that drives this server over a pipe takes it down with it, even when killed. */
  exitWithStdin?: boolean;
}

export function parseMaxSessions(v: string | undefined): number {
  if (v === undefined) return DEFAULT_MAX_SESSIONS;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 100_000) throw new UsageError(`--max-sessions must be a whole number from 1 to 100000 (got ${JSON.stringify(v)})`);
  return n;
}

export const DEFAULT_SWEEP_MS = 5000;

/** `--sweep-ms`: milliseconds from 0 (no sweep) to an hour. */
export function parseSweepMs(v: string | undefined): number {
  if (v === undefined) return DEFAULT_SWEEP_MS;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 3_600_000 || v.trim() === '' || (n > 0 && n < 50)) throw new UsageError(`--sweep-ms must be 0 (no sweep) or a whole number of milliseconds from 50 to 3600000 (got ${JSON.stringify(v)})`);
  return n;
}

/** Seconds, as the flag takes them; milliseconds out. 0: never release. */
export function parseIdleTimeout(v: string | undefined): number {
  if (v === undefined) return DEFAULT_IDLE_TIMEOUT_MS;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 7 * 24 * 3600 || v.trim() === '') throw new UsageError(`--idle-timeout must be a number of seconds from 0 (never) to 604800 (got ${JSON.stringify(v)})`);
  return Math.round(n * 1000);
}

export const parsePort = (v: string | undefined): number => parsePortOr(v, DEFAULT_PORT);

export function parseOrigins(list: string[] | undefined): string[] {
  return (list ?? []).map((o) => {
    let u: URL;
    try {
      u = new URL(o);
    } catch {
      throw new UsageError(`--allow-origin: not an origin: ${o}`);
    }
    if (u.origin === 'null' || u.origin !== o.replace(/\/$/, '')) throw new UsageError(`--allow-origin takes an origin like http://host:port, nothing more (got ${o})`);
    return u.origin;
  });
}

export interface Started {
  server: BridleServer;
  token: string;
  /** The store's relay, closed after the server (its LISTEN connection). */
  relay?: SessionRelay;
  inspector?: OpenInspector;
}

/** Where the server listens and whom it lets in (`--port`, `--host`, `--allow-origin`). */
function listenSettings(flags: ServeFlags): { port: number; host: string; allowOrigins: string[] } {
  return { port: parsePort(flags.port), host: flags.host ?? '127.0.0.1', allowOrigins: parseOrigins(flags.allowOrigin) };
}

interface SessionLimits {
  maxSessions: number;
  idleTimeoutMs: number;
  sweepMs: number;
  workspace: string;
  allowCwd: string[];
}

/** How many sessions, how long one may idle, how often the store is swept, and where a client may point one. Contract: throws `UsageError` for a bad flag. */
function sessionLimits(flags: ServeFlags, shared: boolean): SessionLimits {
  const maxSessions = parseMaxSessions(flags.maxSessions);
  const idleTimeoutMs = parseIdleTimeout(flags.idleTimeout);
  // The lease sweep is Postgres's: a JSONL store's sessions have no lease to expire (ADR 0034).
  const sweepMs = shared ? parseSweepMs(flags.sweepMs) : 0;
  if (!shared && flags.sweepMs !== undefined) parseSweepMs(flags.sweepMs);
  // Fail at start, not at the first session/create, when the defaults are wrong.
  const workspace = resolveWorkspace(flags.cwd);
  const allowCwd = [
    workspace,
    ...(flags.allowCwd ?? []).map((d) => {
      try {
        return resolveWorkspace(d);
      } catch {
        throw new UsageError(`--allow-cwd: not an existing directory: ${d}`);
      }
    }),
  ];
  return { maxSessions, idleTimeoutMs, sweepMs, workspace, allowCwd };
}

/** Starts the server and prints where it is; the caller decides when to stop. */
export async function startServe(given: Product, flags: ServeFlags, err: NodeJS.WritableStream = process.stderr, out: NodeJS.WritableStream = process.stdout): Promise<Started> {
  // On Postgres, each commit wakes the workers that relay the session to their clients (ADR 0030).
  const product: Product = { ...given, rows: given.rows.map((r) => (r.id === 'store' && r.use === 'postgres' ? { ...r, config: { ...(r.config as object), notify: true } } : r)) };
  // The relay of a store many workers share (ADR 0030); none for a store of one process.
  const relay = relayOfRows(product.rows, { present: presentBuiltin });
  const { port, host, allowOrigins } = listenSettings(flags);
  const approval = policyOf(product);
  for (const w of product.warnings) err.write(`bridle serve: warning: ${w}\n`);
  const limits = sessionLimits(flags, relay !== undefined);
  const { maxSessions, idleTimeoutMs, sweepMs, workspace, allowCwd } = limits;
  // Workers' problems may echo a store URL or a server's error text: redacted like every line bridle prints.
  const problem = (m: string) => err.write(`bridle serve: ${visible(redactText(m), 'text')}\n`);
  const url = inspectUrl(flags.inspect);
  const inspector = url ? await openInspector(url) : undefined;
  const fromEnv = process.env.BRIDLE_TOKEN;
  const token = fromEnv || newToken();

  const server: BridleServer = await listenOrExplain(host, port, () =>
    startServer({
      host,
      port,
      token,
      allowOrigins,
      viewer: { dir: viewerDir(), diagrams: visualizationsDir() },
      maxSessions,
      idleTimeoutMs,
      allowCwd,
      inspect: inspector?.inspect as Observer<InspectionEvent> | undefined,
      onProblem: problem,
      usage: usageOfProduct(product),
      reopen: (sessionId, hooks) => reopenStored(product, sessionId, hooks, allowedRoots(allowCwd), problem, relay),
      ...(relay ? { relay, sweepMs } : {}),
      fork: serveFork(product),
      open: serveOpener(product, workspace, problem),
    }),
    async () => (await relay?.close(), await inspector?.close()),
  );

  announceListening({ command: 'serve', host, url: server.url, what: 'JSON-RPC 2.0, see docs/protocol.md', token, tokenFromEnv: !!fromEnv, reach: 'run tools in your workspace' }, out, err);
  if (!isLoopbackHost(host) && server.origins.length === 0 && allowOrigins.length === 0) err.write('bridle serve: browsers cannot connect until you pass --allow-origin <origin> (a wildcard bind has no origin of its own)\n');
  out.write(`viewer: ${server.httpUrl}?token=${fromEnv ? '$BRIDLE_TOKEN' : token}\n`);
  if (inspector) err.write(`inspect: reporting every actor to ${redactUrl(inspector.url)}\n`);
  announceSessions(err, approval, limits, relay !== undefined);
  return { server, token, relay, inspector };
}

/** What the server will do with its sessions: who approves, how many, for how long, where, and the sweep. */
function announceSessions(err: NodeJS.WritableStream, approval: string, l: SessionLimits, shared: boolean): void {
  err.write(`approval: ${approval}${approval === 'ask' ? ' (asked of attached clients)' : ''}\n`);
  err.write(`sessions: at most ${l.maxSessions}; an idle one is released ${l.idleTimeoutMs > 0 ? `after ${l.idleTimeoutMs / 1000} s` : 'never'}; cwd: ${l.allowCwd.join(', ')} or below\n`);
  if (shared) err.write(`sweep: ${l.sweepMs > 0 ? `every ${l.sweepMs} ms, sessions whose owner's lease expired with work left are taken over` : 'off'}\n`);
}
/** Runs until SIGINT or SIGTERM: then closes sessions (logs flushed; open approvals stay open for resume) and exits 0. */
export async function serveCommand(product: Product, flags: ServeFlags): Promise<number> {
  let started: Started;
  try {
    started = await startServe(product, flags);
  } catch (e) {
    if (!(e instanceof ListenError)) throw e;
    process.stderr.write(`bridle serve: ${e.message}\n`);
    return 2;
  }
  const { server, inspector, relay } = started;
  await new Promise<void>((resolve) => {
    let signals = 0;
    const stop = () => {
      signals++;
      if (signals > 1) process.exit(130);
      process.stderr.write('\nbridle serve: stopping… (Ctrl-C again to exit at once)\n');
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    if (flags.exitWithStdin) {
      process.stdin.on('end', resolve);
      process.stdin.on('error', resolve);
      process.stdin.resume();
    }
  });
  await server.close();
  await relay?.close();
  await inspector?.close();
  return 0;
}

