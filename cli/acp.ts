/**
 * `bridle acp`: bridle as an Agent Client Protocol agent on stdin/stdout, for
 * editors (Zed's `agent_servers`, JetBrains, Neovim, Emacs) and headless ACP
 * clients. Thin: it composes nothing itself. Each `session/new` and
 * `session/load` opens a session through `open-session.ts` from the product
 * `settings.ts` composed (the session flags, `--profile`, `--patch`), in the
 * client's cwd, with the client's MCP servers patched in as `mcp:<name>`
 * rows; the agent itself is `server/acp/`. stdout carries the protocol only:
 * everything bridle would print goes to stderr.
 */
import { Readable, Writable } from 'node:stream';
import type { AuthMethod } from '@agentclientprotocol/sdk';
import { LogAccessError, SessionLockedError } from '../log/errors.js';
import { type ComposedRow } from '../plugins/rows.js';
import { CompositionError } from '../plugins/composition-error.js';
import { ProviderSetupError } from '../ports/provider.js';
import { resolveUse } from '../runtime/catalogue.js';
import { createAcpAgent, type AcpAgent, type AcpAgentOptions } from '../server/acp/agent.js';
import { acpRefusal, CANNOT_OPEN, INVALID_PARAMS } from '../server/acp/refusal.js';
import type { OpenAcpSession } from '../server/acp/sessions.js';
import { patchRows } from '../server/acp/mcp-rows.js';
import { guardedStream } from '../server/acp/stdio.js';
import { LoopChangedError, SetupError, UsageError, WorkspaceModuleError } from './errors.js';
import { openSession, resolveWorkspace, WorkspaceChangedUsageError } from './open-session.js';
import type { RunFlags } from './run.js';
import type { Product } from './settings.js';
import { isOpenAIUse, needsNoKey } from '../runtime/settings.js';
import { visible } from './visible.js';
import { bridleVersion } from './version.js';
import { usageOfProduct } from './usage.js';
import { storeOfRows } from '../runtime/stores.js';
import { configChoices, withConfig } from './acp-config.js';

export type AcpFlags = Omit<RunFlags, 'session' | 'json'>;


/** Whether this bridle can mount the rows a client's MCP servers become. */
export const mcpRowsMount = (): boolean => resolveUse({ id: 'mcp:client', use: 'mcp' }) !== undefined;

/** What `initialize` tells the client to set up first: the key, when the model needs one and the environment has none. */
export function authMethodsOf(product: Product, env: NodeJS.ProcessEnv = process.env): AuthMethod[] {
  const row = product.rows.find((r) => r.id === 'model');
  if (!row || !isOpenAIUse(row.use)) return [];
  const c = row.config as { baseUrl: string; apiKeyEnv: string };
  if (env[c.apiKeyEnv] || needsNoKey(c.baseUrl)) return [];
  return [{ id: 'openai-api-key', name: c.apiKeyEnv, description: `Set ${c.apiKeyEnv} in the environment bridle acp is started with (Zed: "env" of its agent_servers entry), or point --base-url at a local OpenAI-compatible server` }];
}

const NOT_FOUND = -32002;
const AUTH_REQUIRED = -32000;

/** Why a session could not be opened, in words for the client (over stdio the client is the user's own editor). */
function openRefusal(err: unknown): unknown {
  // Another process (an editor's agent, a `bridle run`) writes that session: said as `bridle serve` says it, naming the holder.
  if (err instanceof SessionLockedError) return acpRefusal(CANNOT_OPEN, 'SESSION_LOCKED', err.message);
  if (err instanceof CompositionError && err.cause instanceof ProviderSetupError) return acpRefusal(AUTH_REQUIRED, 'SETUP', err.cause.message);
  if (err instanceof UsageError && /^no session log at /.test(err.message)) return acpRefusal(NOT_FOUND, 'NO_SUCH_SESSION', err.message);
  // The client's cwd is not where the session's log says it runs (ADR 0041): named, with both paths.
  if (err instanceof WorkspaceChangedUsageError || err instanceof WorkspaceModuleError) return acpRefusal(INVALID_PARAMS, err.code, err.message);
  // The session's log ran another loop than this agent's (ADR 0096): named, both loops said.
  if (err instanceof LoopChangedError) return acpRefusal(INVALID_PARAMS, err.code, err.message);
  if (err instanceof UsageError || err instanceof CompositionError) return acpRefusal(INVALID_PARAMS, 'CANNOT_OPEN', err.message);
  if (err instanceof SetupError) return acpRefusal(AUTH_REQUIRED, 'SETUP', err.message);
  if (err instanceof LogAccessError) return acpRefusal(INVALID_PARAMS, err.code, err.message);
  return err;
}

/** The `open` the agent is handed: a session as `bridle run` would open it, in the client's workspace. */
export function acpOpener(product: Product, problem: (m: string) => void): OpenAcpSession {
  const mcp = mcpRowsMount();
  return async (params, hooks) => {
    if (params.mcpRows.length > 0 && !mcp) problem(`MCP servers from the client not mounted (this bridle has no "mcp" rows yet): ${params.mcpRows.map((r) => r.id).join(', ')}`);
    const extra = mcp ? params.mcpRows : [];
    try {
      return (await openSession({
        product: withConfig(product, params.config),
        cwd: params.cwd,
        ...(params.sessionId ? { session: params.sessionId } : {}),
        ...(params.traceparent ? { traceparent: params.traceparent } : {}),
        answerer: hooks.answerer,
        askOnBudget: true,
        plugins: hooks.plugins,
        ...(extra.length > 0 ? { rows: (rows: ComposedRow[]) => patchRows(rows, extra, 'acp client') } : {}),
      })).session;
    } catch (err) {
      throw openRefusal(err);
    }
  };
}

/** Anything written with console.log would corrupt the protocol on stdout: send it to stderr. */
export function keepStdoutForTheProtocol(): void {
  const toErr = (...args: unknown[]) => process.stderr.write(`${args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')}\n`);
  console.log = toErr;
  console.info = toErr;
  console.debug = toErr;
}

/** What the agent is built with from the product: its opener, its store's sessions (list, delete), the options a client may set, usage. */
export function acpAgentOptions(product: Product, problem: (m: string) => void, env: NodeJS.ProcessEnv = process.env): AcpAgentOptions {
  return {
    open: acpOpener(product, problem),
    info: { name: 'bridle', title: 'bridle', version: bridleVersion() },
    authMethods: authMethodsOf(product, env),
    mcp: { http: mcpRowsMount() },
    onProblem: problem,
    usage: usageOfProduct(product),
    store: storeOfRows(product.rows, product.home),
    config: (session, set) => configChoices(product, session.recorder.entries, set),
  };
}

export interface StartedAcp {
  agent: AcpAgent;
}

/** Starts the agent on `input`/`output`; resolves once it serves. */
export function startAcp(product: Product, flags: AcpFlags, io: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream; err: NodeJS.WritableStream }): StartedAcp {
  const problem = (m: string) => io.err.write(`bridle acp: ${visible(m, 'text')}\n`);
  for (const w of product.warnings) problem(`warning: ${w}`);
  // The default workspace must exist, as for `run`; each session names its own.
  const defaultCwd = resolveWorkspace(flags.cwd);
  const agent = createAcpAgent({ defaultCwd, ...acpAgentOptions(product, problem) });
  const input = Readable.toWeb(io.input as Readable) as ReadableStream<Uint8Array>;
  const output = Writable.toWeb(io.output as Writable) as WritableStream<Uint8Array>;
  agent.app.connect(guardedStream(output, input));
  return { agent };
}

/** Serves until the client closes stdin (or SIGINT/SIGTERM): then cancels running turns, closes every log, exits 0. */
export async function acpCommand(product: Product, flags: AcpFlags): Promise<number> {
  keepStdoutForTheProtocol();
  const { agent } = startAcp(product, flags, { input: process.stdin, output: process.stdout, err: process.stderr });
  const stop = () => void agent.close();
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await agent.closed;
  return 0;
}
