/**
 * bridle as an MCP server (`bridle mcp`, ADR 0062): one tool, `bridle_run`,
 * that runs a bridle turn on a task (a new session, or one named by id), and
 * two resources per stored session, its log (JSONL, the store's lines as
 * written) and its transcript (the replay timeline). A factory of
 * `McpServer`s on the v2 SDK's server package: the stdio entry builds one per
 * connection, the HTTP entry one per request, so no state lives here — the
 * sessions are in the store. What a run does (open, start, run, close) is
 * the host's (`cli/mcp.ts`), handed in as `run`.
 */
import { McpServer, ResourceNotFoundError, ResourceTemplate, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';

/** What a `bridle_run` call asks for. */
export interface McpRunRequest {
  prompt: string;
  /** A stored session to continue (its id or log path); else a new one. */
  session?: string;
}

/** What a run ended with. */
export interface McpRunResult {
  sessionId: string;
  /** Where the log is, as the store names it. */
  log: string;
  /** The turn's end: `completed`, `aborted`, `error`, … */
  reason: string;
  code?: string;
  /** The text of the turn's last assistant message with any. */
  answer: string;
}

/** A run's hooks: the caller's cancel, and a progress line per step or call when the caller asked for progress. */
export interface McpRunHooks {
  signal: AbortSignal;
  progress?: (message: string) => void;
}

/** A run that could not start, said to the caller as a tool error (`SESSION_LOCKED: …`). */
export class McpRunRefused extends Error {
  override name = 'McpRunRefused';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface StoredSessionInfo {
  id: string;
  cwd: string;
  model: string;
}

export interface BridleMcpOptions {
  version: string;
  /** The session's policy line for the tool's description (`approval never; sandbox …`). */
  describePolicy: string;
  run(request: McpRunRequest, hooks: McpRunHooks): Promise<McpRunResult>;
  /** The store's sessions, for `resources/list`. */
  sessions(): Promise<StoredSessionInfo[]>;
  /** A session's log, its lines as written; undefined when the store has none. */
  log(id: string): Promise<string | undefined>;
  /** A session's transcript (`bridle replay`'s timeline); undefined when the store has none. */
  transcript(id: string): Promise<string | undefined>;
}

export const logUri = (id: string) => `bridle://sessions/${encodeURIComponent(id)}/log`;
export const transcriptUri = (id: string) => `bridle://sessions/${encodeURIComponent(id)}/transcript`;

const RunInput = z.object({
  prompt: z.string().min(1).describe('what the agent is to do, as you would type it to bridle run'),
  session: z.string().min(1).optional().describe('a session id (from an earlier result) to continue; omit for a new session'),
});

const RunOutput = z.object({
  sessionId: z.string(),
  log: z.string(),
  reason: z.string(),
  code: z.string().optional(),
  answer: z.string(),
});

/** The text the caller reads: the answer, then where the log is. Contract: pure. */
export function runResultOf(r: McpRunResult): CallToolResult {
  const failed = r.reason !== 'completed';
  const head = failed ? `the turn ended ${r.reason}${r.code ? ` (${r.code})` : ''}${r.answer ? `; its last text:\n${r.answer}` : ''}` : r.answer || '(the turn ended with no text)';
  return {
    content: [
      { type: 'text', text: `${head}\n\nsession: ${r.sessionId}\nlog: ${r.log}` },
      { type: 'resource_link', uri: logUri(r.sessionId), name: `${r.sessionId} log`, mimeType: 'application/jsonl' },
      { type: 'resource_link', uri: transcriptUri(r.sessionId), name: `${r.sessionId} transcript`, mimeType: 'text/plain' },
    ],
    structuredContent: { ...r },
    ...(failed ? { isError: true } : {}),
  };
}

const refusedResult = (err: McpRunRefused): CallToolResult => ({ content: [{ type: 'text', text: `bridle: ${err.code}: ${err.message}` }], isError: true });

/** Progress as the caller asked for it: one notification per line, `progress` counting up. */
function progressOf(ctx: ServerContext): ((message: string) => void) | undefined {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return undefined;
  let n = 0;
  return (message) => void ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: ++n, message } }).catch(() => undefined);
}

async function runTool(o: BridleMcpOptions, args: z.infer<typeof RunInput>, ctx: ServerContext): Promise<CallToolResult> {
  const progress = progressOf(ctx);
  try {
    const r = await o.run({ prompt: args.prompt, ...(args.session !== undefined ? { session: args.session } : {}) }, { signal: ctx.mcpReq.signal, ...(progress ? { progress } : {}) });
    return runResultOf(r);
  } catch (err) {
    if (err instanceof McpRunRefused) return refusedResult(err);
    throw err;
  }
}

function sessionResource(o: BridleMcpOptions, server: McpServer, kind: 'log' | 'transcript'): void {
  const uriOf = kind === 'log' ? logUri : transcriptUri;
  const mimeType = kind === 'log' ? 'application/jsonl' : 'text/plain';
  const template = new ResourceTemplate(`bridle://sessions/{id}/${kind}`, {
    list: async () => ({ resources: (await o.sessions()).map((s) => ({ uri: uriOf(s.id), name: `${s.id} ${kind}`, mimeType, description: `${s.model} in ${s.cwd}` })) }),
  });
  const description = kind === 'log' ? "a bridle session's log, one JSON entry a line, as the store holds it" : "a bridle session's timeline, as bridle replay prints it";
  server.registerResource(`session-${kind}`, template, { title: `bridle session ${kind}`, description, mimeType }, async (uri, vars) => {
    const id = decodeURIComponent(String(vars.id));
    const text = await (kind === 'log' ? o.log(id) : o.transcript(id));
    if (text === undefined) throw new ResourceNotFoundError(uri.href, `no session ${id} in the store`);
    return { contents: [{ uri: uri.href, mimeType, text }] };
  });
}

/** Contract: a fresh server each call, holding nothing between calls; every run goes through `o.run`. */
export function createBridleMcpServer(o: BridleMcpOptions): McpServer {
  const server = new McpServer({ name: 'bridle', title: 'bridle', version: o.version }, { capabilities: { tools: {}, resources: {} } });
  server.registerTool(
    'bridle_run',
    {
      title: 'Run a bridle agent session',
      description: `Runs a bridle coding agent on a task until it ends its turn, and returns its final answer with the session id and log path. Pass the session id back to continue that session. Runs under ${o.describePolicy}.`,
      inputSchema: RunInput,
      outputSchema: RunOutput,
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
    },
    (args, ctx) => runTool(o, args, ctx),
  );
  sessionResource(o, server, 'log');
  sessionResource(o, server, 'transcript');
  return server;
}
