/**
 * `bridle serve`: the WebSocket JSON-RPC server (docs/protocol.md) and the
 * session viewer, on loopback unless told otherwise. Each `session/create`
 * opens a session exactly as `bridle run` would (same workspace, model,
 * sandbox and approval flags); `--approval ask` asks the attached clients.
 * A client may point a session at `--cwd` or below (or an `--allow-cwd`);
 * at most `--max-sessions` are open, and one left idle is released.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { InspectionEvent, Observer } from 'xstate';
import { isLoopbackHost, newToken } from '../server/access.js';
import { allowedRoots, checkCwd } from '../server/allowed-cwd.js';
import type { SessionHooks } from '../server/hosted-session.js';
import { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_SESSIONS } from '../server/hub-limits.js';
import { ErrorCode, refusal, Reason } from '../server/protocol.js';
import { DEFAULT_PORT, startServer, type BridleServer } from '../server/server.js';
import { viewerDir, visualizationsDir } from '../visualizations/paths.js';
import { SessionNotSavedError, SetupError, UsageError } from './errors.js';
import { announceListening, ListenError, listenOrExplain, parsePort as parsePortOr } from './listen.js';
import { SessionLockedError } from '../log/errors.js';
import { PolicyWidenedError } from '../runtime/session-policy.js';
import { inspectUrl, openInspector, type OpenInspector } from './inspect.js';
import { CompositionError, type ComposedRow } from '../plugins/rows.js';
import { applySettings } from '../runtime/settings.js';
import { openSession, resolveWorkspace, SessionExistsError } from './open-session.js';
import { forkSession } from '../runtime/logs/fork.js';
import { resumableTurn } from '../log/resumable.js';
import { freshSessionId } from '../runtime/catalogue.js';
import { policyOf, type RunFlags } from './run.js';
import { repairForResume } from './resume.js';
import { relayOfRows, sessionOfRef } from '../runtime/stores.js';
import type { SessionRelay } from '../ports/relay.js';
import { presentBuiltin } from './render.js';
import { refuseBeforeClaim } from './serve-preflight.js';
import type { Entry } from '../log/entries.js';
import { loggedWorkspace } from '../runtime/session-policy.js';
import { restoreSessionSnapshot } from '../machines/session-fold.js';
import { ralphState } from '../runtime/ralph/state.js';
import type { BridleSession } from '../runtime/session.js';
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

/** A script is a small JSON file; anything past this is not one. */
const MAX_SCRIPT_BYTES = 16 * 1024 * 1024;

const unusableScript = (model: string) =>
  refusal(ErrorCode.CreateFailed, Reason.MODEL_UNAVAILABLE, `model ${JSON.stringify(model)} is not a readable, valid scripted-model script (the server's log says why)`);

/**
 * A client may name any path as `scripted:<path>`, and reading a device, a
 * FIFO or a /proc file (size 0, however much it yields) could block the
 * server's one thread or fill its memory: only a non-empty regular file of
 * at most 16 MiB is read. (The operator's own `--model` is not checked.)
 */
function checkClientScript(model: string, problem: (m: string) => void): void {
  const file = resolve(model.slice('scripted:'.length));
  let why: string | undefined;
  try {
    const st = statSync(file);
    if (!st.isFile()) why = 'not a regular file';
    else if (st.size === 0) why = 'empty, or a file that reports no size';
    else if (st.size > MAX_SCRIPT_BYTES) why = `larger than ${MAX_SCRIPT_BYTES} bytes`;
  } catch (err) {
    why = (err as Error).message;
  }
  if (why === undefined) return;
  problem(`session/create: script ${file}: ${why}`);
  throw unusableScript(model);
}

/**
 * Why a session could not be opened, in words a client may read. A scripted
 * model's load errors quote the file (JSON.parse and zod show what they
 * read), and a client may name any file: only the server's log gets those.
 */
function openRefusal(err: unknown, model: string | undefined, problem: (m: string) => void, what = 'session/create'): unknown {
  // Another process writes that session, or its log cannot be saved: said as such, not as a model problem.
  if (err instanceof SessionLockedError) return (problem(`${what}: ${err.message}`), refusal(ErrorCode.CreateFailed, Reason.SESSION_LOCKED, err.message));
  if (err instanceof SessionNotSavedError) return (problem(`${what}: ${err.message}`), refusal(ErrorCode.CreateFailed, Reason.SESSION_NOT_SAVED, err.message));
  if (err instanceof SessionExistsError) return (problem(`${what}: ${err.message}`), refusal(ErrorCode.CreateFailed, Reason.SESSION_EXISTS, 'a session with that id exists already'));
  if (!(err instanceof UsageError || err instanceof SetupError || err instanceof CompositionError)) return err;
  problem(`${what}: ${err.message}`);
  // A logged policy this server's flags would widen (ADR 0027): said as such, not as a model problem.
  if (err.cause instanceof PolicyWidenedError) return refusal(ErrorCode.CreateFailed, Reason.POLICY_WIDENED, err.message);
  if (model?.startsWith('scripted:')) return unusableScript(model);
  return refusal(ErrorCode.CreateFailed, Reason.MODEL_UNAVAILABLE, err.message);
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

export { ListenError };

export interface Started {
  server: BridleServer;
  token: string;
  /** The store's relay, closed after the server (its LISTEN connection). */
  relay?: SessionRelay;
  inspector?: OpenInspector;
}

/** Starts the server and prints where it is; the caller decides when to stop. */
export async function startServe(given: Product, flags: ServeFlags, err: NodeJS.WritableStream = process.stderr, out: NodeJS.WritableStream = process.stdout): Promise<Started> {
  // On Postgres, each commit wakes the workers that relay the session to their clients (ADR 0030).
  const product: Product = { ...given, rows: given.rows.map((r) => (r.id === 'store' && r.use === 'postgres' ? { ...r, config: { ...(r.config as object), notify: true } } : r)) };
  // The relay of a store many workers share (ADR 0030); none for a store of one process.
  const relay = relayOfRows(product.rows, { present: presentBuiltin });
  const shared = relay !== undefined;
  const port = parsePort(flags.port);
  const host = flags.host ?? '127.0.0.1';
  const allowOrigins = parseOrigins(flags.allowOrigin);
  const approval = policyOf(product);
  for (const w of product.warnings) err.write(`bridle serve: warning: ${w}\n`);
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
      fork: async (p) => {
        const { store, id } = sessionOfRef(product.rows, product.home, p.sessionId);
        const f = await forkSession({ store, session: id, id: freshSessionId(), clock: Date.now, ...(p.at !== undefined ? { at: p.at } : {}), ...(p.answer !== undefined ? { answer: p.answer } : {}) });
        return { id: f.id, forkOf: f.forkOf, open: f.open, resumable: f.open && resumableTurn(f.entries) !== undefined };
      },
      open: async (params, hooks) => {
        if (params.model?.startsWith('scripted:')) checkClientScript(params.model, problem);
        const model = params.model;
        try {
          return (await openSession({
            product,
            cwd: params.cwd ?? workspace,
            // A fork `session/fork` just wrote is opened as the session it is.
            ...(params.fork !== undefined ? { session: params.fork } : {}),
            answerer: hooks.answerer,
            ...(hooks.inspect ? { inspect: hooks.inspect } : {}),
            askOnBudget: hooks.askOnBudget,
            ...(params.traceparent !== undefined ? { traceparent: params.traceparent } : {}),
            ...(params.id !== undefined || params.depth !== undefined || params.parent !== undefined
              ? { lineage: { ...(params.id !== undefined ? { id: params.id } : {}), depth: params.depth ?? 0, parent: params.parent ?? null } }
              : {}),
            // A client's model is sugar over the model row, as a flag's would be.
            ...(model ? { rows: (rows: ComposedRow[]) => applySettings(rows, [{ from: 'client', settings: { model } }]).rows } : {}),
          })).session;
        } catch (e) {
          throw openRefusal(e, model ?? modelOf(product), problem);
        }
      },
    }),
    async () => (await relay?.close(), await inspector?.close()),
  );

  announceListening({ command: 'serve', host, url: server.url, what: 'JSON-RPC 2.0, see docs/protocol.md', token, tokenFromEnv: !!fromEnv, reach: 'run tools in your workspace' }, out, err);
  if (!isLoopbackHost(host) && server.origins.length === 0 && allowOrigins.length === 0) err.write('bridle serve: browsers cannot connect until you pass --allow-origin <origin> (a wildcard bind has no origin of its own)\n');
  const shownToken = fromEnv ? '$BRIDLE_TOKEN' : token;
  out.write(`viewer: ${server.httpUrl}?token=${shownToken}\n`);
  if (inspector) err.write(`inspect: reporting every actor to ${redactUrl(inspector.url)}\n`);
  err.write(`approval: ${approval}${approval === 'ask' ? ' (asked of attached clients)' : ''}\n`);
  err.write(`sessions: at most ${maxSessions}; an idle one is released ${idleTimeoutMs > 0 ? `after ${idleTimeoutMs / 1000} s` : 'never'}; cwd: ${allowCwd.join(', ')} or below\n`);
  if (shared) err.write(`sweep: ${sweepMs > 0 ? `every ${sweepMs} ms, sessions whose owner's lease expired with work left are taken over` : 'off'}\n`);
  return { server, token, ...(relay ? { relay } : {}), ...(inspector ? { inspector } : {}) };
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

/** What a session id a client names may look like (as the ids seam makes them): never a path, never a URL. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/**
 * A session of the server's store that this process does not host (a predecessor's, one closed here, one
 * `bridle run` left): its writer's claim taken (a dead holder's taken over, a live one's refused naming it),
 * its log repaired exactly as `bridle resume` repairs it (nothing re-run), then opened from its newest
 * checkpoint under the same claim, with the server's hooks; input it had queued runs first. It runs on the
 * server's own product (model, sandbox, approval), in the directory its log names, which must be one the
 * server allows. Resolves undefined when the store has no such session.
 */
async function reopenStored(product: Product, sessionId: string, hooks: SessionHooks, roots: readonly string[], problem: (m: string) => void, relay: SessionRelay | undefined): Promise<BridleSession | undefined> {
  if (!SESSION_ID.test(sessionId) || sessionId.endsWith('.jsonl')) return undefined;
  const where = sessionOfRef(product.rows, product.home, sessionId);
  if ((await where.store.tail(sessionId, Number.MAX_SAFE_INTEGER)) === undefined) return undefined;
  // A session this server could not run is refused before its claim, its lease left to a worker that can (ADR 0042).
  await refuseBeforeClaim(product, where, roots, relay);
  const said: string[] = [];
  const notes = { write: (l: string) => (said.push(l.trimEnd()), true) };
  const notResumable = (why: string) => refusal(ErrorCode.CreateFailed, Reason.SESSION_NOT_RESUMABLE, `session ${sessionId} cannot be resumed here: ${why}`);
  let r: Awaited<ReturnType<typeof repairForResume>>;
  try {
    r = await repairForResume(where, sessionId, notes);
  } catch (e) {
    for (const l of said) problem(`session ${sessionId}: ${l}`);
    if (e instanceof SessionLockedError) throw refusal(ErrorCode.CreateFailed, Reason.SESSION_LOCKED, e.message);
    if (e instanceof UsageError) throw notResumable(e.message);
    throw e;
  }
  for (const l of said) problem(`session ${sessionId}: ${l}`);
  if (typeof r === 'number') throw notResumable("its log (or a subagent's) is corrupt; the server's log says where");
  const { entries, open } = r;
  try {
    const start = entries[0] as Extract<Entry, { kind: 'session/start' }>;
    if (ralphState(entries)) throw notResumable('it is a Ralph run; continue it with bridle resume');
    // Where its log says it runs now (a `--move-workspace` may have moved it since its start).
    const cwd = checkCwd(loggedWorkspace(entries) ?? start.cwd, roots);
    if (!cwd.ok) throw notResumable(`its directory is not one this server allows (${cwd.reason})`);
    const maxSteps = (product.rows.find((row) => row.id === 'turn')?.config as { maxSteps?: number } | undefined)?.maxSteps;
    const snapshot = restoreSessionSnapshot(entries, maxSteps !== undefined ? { maxSteps } : {});
    return (await openSession({
      product,
      cwd: cwd.cwd,
      session: open.session,
      existing: entries,
      snapshot,
      lock: open.lock,
      store: open.store,
      answerer: hooks.answerer,
      ...(hooks.inspect ? { inspect: hooks.inspect } : {}),
      askOnBudget: hooks.askOnBudget,
    })).session;
  } catch (e) {
    open.lock.release();
    throw openRefusal(e, modelOf(product), problem, `session ${sessionId}: opening it from the store (an attach, an input or a takeover)`);
  }
}

/** The model the product's `model` row names, as a `--model` would (`scripted:<file>` or the id). */
function modelOf(product: Product): string | undefined {
  const row = product.rows.find((r) => r.id === 'model');
  const c = row?.config as { model?: string; file?: string } | undefined;
  return row?.use === 'scripted' ? `scripted:${c?.file}` : c?.model;
}
