/**
 * `bridle mcp`: bridle as an MCP server (ADR 0062), on stdin/stdout (the
 * default) or, with `--http`, streamable HTTP on loopback behind a token
 * (`server/mcp/http.ts`). Thin, as `bridle acp` is: each `bridle_run` call
 * opens a session through `open-session.ts` from the product `settings.ts`
 * composed (the session flags, `--profile`, `--patch`), runs the prompt as
 * one turn, closes it; the log lands in the store like any other. Who
 * answers approvals is the caller, when it declared form elicitation: unless
 * a flag, the environment, a profile or the config file chose a policy, its
 * sessions run under `ask` and each approval becomes an input request to it
 * (ADR 0075); a caller that cannot answer gets `never` (ADR 0052), so
 * nothing asks; under a chosen `ask` it gets a denial (`no answerer`).
 */
import { randomUUID } from 'node:crypto';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Entry } from '../log/entries.js';
import { SessionLockedError, LogAccessError } from '../log/errors.js';
import { finalText } from '../log/completed-turns.js';
import { CompositionError } from '../plugins/composition-error.js';
import { ProviderSetupError } from '../ports/provider.js';
import { applySettings } from '../runtime/settings.js';
import { SessionCrashedError } from '../runtime/session-fault.js';
import { readSessionLog } from '../runtime/logs/read.js';
import { storeOfRows } from '../runtime/stores.js';
import { newToken } from '../server/access.js';
import { createBridleMcpServer, mcpAsking, McpRunRefused, type BridleMcpOptions, type McpRunHooks, type McpRunRequest, type McpRunResult } from '../server/mcp/bridle-mcp.js';
import { MCP_CALLER_HEADER, startMcpHttp, type McpHttpServer } from '../server/mcp/http.js';
import { RoundCancel } from '../server/mcp/rounds.js';
import { keepStdoutForTheProtocol } from './acp.js';
import { LoopChangedError, SessionNotSavedError, SetupError, UsageError, WorkspaceModuleError } from './errors.js';
import { openSession, resolveWorkspace, WorkspaceChangedUsageError } from './open-session.js';
import { presentCall, type ToolLookup } from '../tools/present.js';
import { policyOf, type RunFlags } from './run.js';
import { announceListening, ListenError, listenOrExplain, parsePort } from './listen.js';
import type { Product } from './settings.js';
import type { Answerer } from '../ports/approval.js';
import { formatTotals, timelineLine } from './timeline.js';
import { verifyParsed } from './verify-log.js';
import { bridleVersion } from './version.js';
import { visible } from './visible.js';
import { TurnEndCode } from '../log/codes.js';

export interface McpFlags extends Omit<RunFlags, 'session' | 'json'> {
  http?: boolean;
  port?: string;
  host?: string;
}

const chosenPolicy = (product: Product) => {
  const row = product.rows.find((r) => r.id === 'approval');
  return !row || !row.from.startsWith('bundle ');
};

/** The policy a headless caller can bear: `never`, unless someone chose one (a flag, the environment, a profile, the config file). Contract: pure. */
export function headlessProduct(product: Product): Product {
  if (chosenPolicy(product)) return product;
  return { ...product, rows: applySettings(product.rows, [{ from: 'mcp default', settings: { approval: 'never' } }]).rows };
}

/** The policy for a caller that answers input requests: `ask`, unless someone chose one. Contract: pure. */
export function answeringProduct(product: Product): Product {
  if (chosenPolicy(product)) return product;
  return { ...product, rows: applySettings(product.rows, [{ from: 'mcp default (the caller answers)', settings: { approval: 'ask' } }]).rows };
}

/** The two products a call may run under: one for a caller that answers approvals, one for a caller that cannot. */
export interface McpProducts {
  answering: Product;
  headless: Product;
}

export const mcpProducts = (given: Product): McpProducts => ({ answering: answeringProduct(given), headless: headlessProduct(given) });

/** Who cancelled, in the log: the server stopping, the rounds (no answer in time), or the caller. */
function cancelledBy(runs: Runs, signal: AbortSignal): string {
  if (runs.stopping.signal.aborted) return 'mcp: the server is stopping';
  return signal.reason instanceof RoundCancel ? signal.reason.message : 'mcp client';
}

/** Why a session could not be opened, as a named refusal the caller reads; anything else is thrown on. */
function refusalOf(err: unknown): unknown {
  if (err instanceof SessionLockedError) return new McpRunRefused('SESSION_LOCKED', err.message);
  if (err instanceof CompositionError && err.cause instanceof ProviderSetupError) return new McpRunRefused('SETUP', err.cause.message);
  if (err instanceof WorkspaceChangedUsageError || err instanceof WorkspaceModuleError) return new McpRunRefused(err.code, err.message);
  // Another loop than the one the session's log ran (ADR 0096): its code, once.
  if (err instanceof LoopChangedError) return new McpRunRefused(err.code, err.detail);
  if (err instanceof UsageError && /^no session log at /.test(err.message)) return new McpRunRefused('NO_SUCH_SESSION', err.message);
  if (err instanceof SessionNotSavedError) return new McpRunRefused('SESSION_NOT_SAVED', err.message);
  if (err instanceof UsageError || err instanceof CompositionError || err instanceof SetupError) return new McpRunRefused('CANNOT_OPEN', err.message);
  if (err instanceof LogAccessError) return new McpRunRefused(err.code, err.message);
  return err;
}

/** One line of progress for an entry: a step, a call, an approval's answer, the turn's end; undefined for the rest. Contract: pure. */
export function progressLine(e: Entry, tools: ToolLookup): string | undefined {
  switch (e.kind) {
    case 'step/start':
      return `step ${e.step}`;
    case 'tool/call':
      return visible(`→ ${presentCall(tools, e.name, e.arguments)}`);
    case 'approval/decided':
      return `approval for ${e.callId}: ${e.outcome} (${visible(e.by)})`;
    case 'turn/end':
      return `turn ${e.turn} ended: ${e.reason}${e.code ? ` (${e.code})` : ''}`;
    default:
      return undefined;
  }
}

/** Runs in flight, so a stop cancels them and waits for their logs to close. */
class Runs {
  private readonly running = new Set<Promise<unknown>>();
  readonly stopping = new AbortController();
  track<T>(p: Promise<T>): Promise<T> {
    this.running.add(p);
    void p.finally(() => this.running.delete(p)).catch(() => undefined);
    return p;
  }
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled([...this.running]);
  }
}

/** One `bridle_run` call: a session opened as `bridle run` opens it, one turn, closed; cancelled when the caller cancels or the server stops. */
async function runOne(products: McpProducts, flags: McpFlags, runs: Runs, req: McpRunRequest, hooks: McpRunHooks): Promise<McpRunResult> {
  let opened: Awaited<ReturnType<typeof openSession>> | undefined;
  const asker = hooks.answerer;
  // The question is in the log before the caller hears it: a crash while it waits leaves it for the repair.
  const answerer: Answerer | undefined = asker && (async (q) => (await opened?.session.recorder.flush().catch(() => undefined), asker(q)));
  const product = answerer ? products.answering : products.headless;
  try {
    opened = await openSession({ product, ...(answerer ? { answerer } : {}), ...(flags.cwd !== undefined ? { cwd: flags.cwd } : {}), ...(req.session !== undefined ? { session: req.session } : {}) });
  } catch (err) {
    throw refusalOf(err);
  }
  const { session, logPath, tools } = opened;
  const progress = hooks.progress;
  const unsubscribe = progress
    ? session.subscribe((ev) => {
        const line = ev.type === 'entry.appended' ? progressLine(ev.entry, tools) : undefined;
        if (line) progress(line);
      })
    : () => undefined;
  const signal = AbortSignal.any([hooks.signal, runs.stopping.signal]);
  const cancel = () => void session.cancel(cancelledBy(runs, signal)).catch(() => undefined);
  try {
    opened.start();
  } catch (err) {
    unsubscribe();
    throw refusalOf(err);
  }
  signal.addEventListener('abort', cancel, { once: true });
  try {
    const out = signal.aborted ? undefined : await session.run(req.prompt).catch((e: unknown) => (e instanceof SessionCrashedError ? undefined : Promise.reject(e)));
    const crashed = !out && !signal.aborted;
    return {
      sessionId: session.id,
      log: logPath,
      reason: out?.reason ?? (crashed ? 'error' : 'aborted'),
      ...(out?.code ? { code: out.code } : crashed ? { code: TurnEndCode.SESSION_CRASHED } : {}),
      answer: finalText(session.recorder.entries, opened.priorEntries),
    };
  } finally {
    signal.removeEventListener('abort', cancel);
    unsubscribe();
    await session.close().catch(() => undefined);
  }
}

/** The store's half of the server: its sessions, a log's lines, a log's timeline. */
function storeSide(product: Product): Pick<BridleMcpOptions, 'sessions' | 'log' | 'transcript'> {
  const store = storeOfRows(product.rows, product.home);
  const read = async (id: string) => {
    // A resource names a session of this store by id, never a path.
    if (id.includes('/') || id.endsWith('.jsonl')) return undefined;
    return store.read(id);
  };
  return {
    sessions: async () => (await store.list()).sessions.map((s) => ({ id: s.id, cwd: s.cwd, model: s.model })),
    log: async (id) => {
      const log = await read(id);
      return log ? [...log.lines, ...(log.last ? [log.last.text] : [])].map((l) => `${l}\n`).join('') : undefined;
    },
    transcript: async (id) => {
      if (id.includes('/') || id.endsWith('.jsonl')) return undefined;
      const parsed = await readSessionLog(store, id);
      if (!parsed) return undefined;
      const { verdict, entries } = verifyParsed(parsed);
      const status = verdict.ok ? `ok: ${parsed.location} verifies (${verdict.totals.entries} entries)` : verdict.violations.map((v) => visible(`${v.violation}: ${v.message}`)).join('\n');
      return `${entries.map(timelineLine).join('\n')}\n\n${formatTotals(verdict.totals)}\n${status}\n`;
    },
  };
}

/** The server's options: runs go through `runOne`, resources through the product's store. */
export function bridleMcpOptions(products: McpProducts, flags: McpFlags, runs: Runs = new Runs()): BridleMcpOptions {
  return {
    version: bridleVersion(),
    describePolicy: describePolicy(products),
    run: (req, hooks) => runs.track(runOne(products, flags, runs, req, hooks)),
    asking: mcpAsking(() => randomUUID(), () => new Date()),
    ...storeSide(products.headless),
  };
}

/** The policy line of the tool's description and the start-up line. Contract: pure. */
export function describePolicy(p: McpProducts): string {
  const [answering, headless] = [policyOf(p.answering), policyOf(p.headless)];
  if (answering === headless) return `approval policy "${headless}"${headless === 'ask' ? ' (each approval is asked of you as an input request; a caller that cannot answer is refused)' : ''}`;
  return `approval policy "${answering}" when you answer input requests (form elicitation: each approval is asked of you), else "${headless}" (no one is asked: a call beyond the session's confinement is refused)`;
}

export interface StartedMcp {
  /** Set with `--http`. */
  http?: McpHttpServer;
  token?: string;
  /** Cancels running turns, closes their logs and the transport. */
  stop(): Promise<void>;
}

/** Starts the server (stdio, or HTTP with `--http`); the caller decides when to stop. */
export async function startMcp(given: Product, flags: McpFlags, err: NodeJS.WritableStream = process.stderr, out: NodeJS.WritableStream = process.stdout): Promise<StartedMcp> {
  const products = mcpProducts(given);
  for (const w of given.warnings) err.write(`bridle mcp: warning: ${w}\n`);
  resolveWorkspace(flags.cwd);
  const runs = new Runs();
  const options = bridleMcpOptions(products, flags, runs);
  const policyLine = describePolicy(products);
  const problem = (m: string) => err.write(`bridle mcp: ${visible(m, 'text')}\n`);
  const factory = () => createBridleMcpServer(options);
  if (!flags.http) {
    if (flags.port !== undefined || flags.host !== undefined) throw new UsageError('--port and --host are for --http; over stdio there is nothing to bind');
    const handle = serveStdio(factory, { onerror: (e) => problem(e.message) });
    err.write(`bridle mcp: serving MCP on stdin/stdout; ${policyLine}\n`);
    return { stop: async () => (await runs.stop(), await handle.close()) };
  }
  const host = flags.host ?? '127.0.0.1';
  const port = parsePort(flags.port, 0);
  const token = process.env.BRIDLE_TOKEN || newToken();
  // The caller's identity over HTTP: the `mcp-session-id` the HTTP entry gave it, sent back on each request (ADR 0089).
  const httpFactory = (ctx?: { requestInfo?: Request }) => {
    const caller = ctx?.requestInfo?.headers.get(MCP_CALLER_HEADER) ?? undefined;
    return createBridleMcpServer(caller ? { ...options, caller } : options);
  };
  const handler = createMcpHandler(httpFactory, { onerror: (e) => problem(e.message) });
  const http: McpHttpServer = await listenOrExplain(host, port, () => startMcpHttp({ host, port, token, handler, onProblem: problem }));
  announceListening({ command: 'mcp', host, url: http.url, what: 'MCP streamable HTTP', token, tokenFromEnv: !!process.env.BRIDLE_TOKEN, reach: 'run an agent in your workspace' }, out, err);
  err.write(`${policyLine}\n`);
  return { http, token, stop: async () => (await runs.stop(), await http.close()) };
}

/** Serves until stdin ends (stdio: the client went away) or SIGINT/SIGTERM: then cancels running turns, closes every log, exits 0. */
export async function mcpCommand(product: Product, flags: McpFlags): Promise<number> {
  if (!flags.http) keepStdoutForTheProtocol();
  let started: StartedMcp;
  try {
    started = await startMcp(product, flags);
  } catch (e) {
    if (!(e instanceof ListenError)) throw e;
    process.stderr.write(`bridle mcp: ${e.message}\n`);
    return 2;
  }
  await new Promise<void>((resolve) => {
    process.on('SIGINT', resolve);
    process.on('SIGTERM', resolve);
    if (!flags.http) {
      process.stdin.on('end', resolve);
      process.stdin.on('close', resolve);
    }
  });
  await started.stop();
  return 0;
}
