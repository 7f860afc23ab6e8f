/**
 * `bridle serve`: the WebSocket JSON-RPC server (docs/protocol.md) and the
 * session viewer, on loopback unless told otherwise. Each `session/create`
 * opens a session exactly as `bridle run` would (same workspace, model,
 * sandbox and approval flags); `--approval ask` asks the attached clients.
 */
import type { InspectionEvent, Observer } from 'xstate';
import { isLoopbackHost, newToken } from '../adapters/server/access.js';
import { DEFAULT_PORT, startServer, type BridleServer } from '../adapters/server/server.js';
import { viewerDir, visualizationsDir } from '../visualizations/paths.js';
import { UsageError } from './errors.js';
import { inspectUrl, openInspector, type OpenInspector } from './inspect.js';
import { chooseModel } from './model.js';
import { openSession, resolveWorkspace } from './open-session.js';
import { parseApproval, parseContextWindow, parseMaxDepth, parseMaxSteps, type RunFlags } from './run.js';
import { parseSafetyFlags } from './safety-flags.js';

export interface ServeFlags extends RunFlags {
  port?: string;
  host?: string;
  allowOrigin?: string[];
  inspect?: string | boolean;
}

export function parsePort(v: string | undefined): number {
  if (v === undefined) return DEFAULT_PORT;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port must be a whole number from 0 to 65535 (got ${JSON.stringify(v)})`);
  return n;
}

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
  inspector?: OpenInspector;
}

/** Starts the server and prints where it is; the caller decides when to stop. */
export async function startServe(flags: ServeFlags, err: NodeJS.WritableStream = process.stderr, out: NodeJS.WritableStream = process.stdout): Promise<Started> {
  const port = parsePort(flags.port);
  const host = flags.host ?? '127.0.0.1';
  const allowOrigins = parseOrigins(flags.allowOrigin);
  const approval = parseApproval(flags.approval) ?? 'ask';
  const maxSteps = parseMaxSteps(flags.maxSteps);
  const maxDepth = parseMaxDepth(flags.maxDepth);
  const contextWindow = parseContextWindow(flags.contextWindow);
  const safety = parseSafetyFlags(flags);
  // Fail at start, not at the first session/create, when the defaults are wrong.
  if (flags.cwd) resolveWorkspace(flags.cwd);
  if (flags.model || process.env.BRIDLE_MODEL) chooseModel(flags);
  const url = inspectUrl(flags.inspect);
  const inspector = url ? await openInspector(url) : undefined;
  const fromEnv = process.env.BRIDLE_TOKEN;
  const token = fromEnv || newToken();

  const server = await startServer({
    host,
    port,
    token,
    allowOrigins,
    viewer: { dir: viewerDir(), diagrams: visualizationsDir() },
    inspect: inspector?.inspect as Observer<InspectionEvent> | undefined,
    onProblem: (m) => err.write(`bridle serve: ${m}\n`),
    open: (params, hooks) =>
      openSession({
        model: params.model ?? flags.model,
        baseUrl: flags.baseUrl,
        cwd: params.cwd ?? flags.cwd,
        approval,
        answerer: hooks.answerer,
        rules: safety.rules,
        sandbox: safety.sandbox,
        sandboxMode: safety.sandboxMode,
        allowNetwork: safety.allowNetwork,
        allowGitWrites: safety.allowGitWrites,
        sandboxLimits: safety.sandboxLimits,
        maxSteps,
        maxDepth,
        contextWindow,
        contextWindows: flags.contextWindows,
        onChunk: hooks.onChunk,
        inspect: hooks.inspect,
      }).session,
  });

  if (!isLoopbackHost(host)) {
    err.write(`bridle serve: WARNING: listening on ${host}, not loopback: anyone who can reach this address and has the token can run tools in your workspace.\n`);
    if (server.origins.length === 0 && allowOrigins.length === 0) err.write('bridle serve: browsers cannot connect until you pass --allow-origin <origin> (a wildcard bind has no origin of its own)\n');
  }
  const shownToken = fromEnv ? '$BRIDLE_TOKEN' : token;
  out.write(`bridle serve: ${server.url} (JSON-RPC 2.0, see docs/protocol.md)\n`);
  out.write(`token: ${fromEnv ? 'from $BRIDLE_TOKEN' : token}\n`);
  out.write(`viewer: ${server.httpUrl}?token=${shownToken}\n`);
  if (inspector) err.write(`inspect: reporting every actor to ${inspector.url}\n`);
  err.write(`approval: ${approval}${approval === 'ask' ? ' (asked of attached clients)' : ''}\n`);
  return { server, token, inspector };
}

/** Runs until SIGINT or SIGTERM: then closes sessions (logs flushed; open approvals stay open for resume) and exits 0. */
export async function serveCommand(flags: ServeFlags): Promise<number> {
  const { server, inspector } = await startServe(flags);
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
  });
  await server.close();
  await inspector?.close();
  return 0;
}
