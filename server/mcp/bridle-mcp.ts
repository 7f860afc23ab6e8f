/**
 * bridle as an MCP server (`bridle mcp`, ADR 0062): one tool, `bridle_run`,
 * that runs a bridle turn on a task (a new session, or one named by id), and
 * two resources per stored session, its log (JSONL, the store's lines as
 * written) and its transcript (the replay timeline). A factory of
 * `McpServer`s on the v2 SDK's server package: the stdio entry builds one per
 * connection, the HTTP entry one per request, so no state lives here — the
 * sessions are in the store. What a run does (open, start, run, close) is
 * the host's (`cli/mcp.ts`), handed in as `run`. A run that asks an
 * approval of a caller that answers input requests goes on across the call's
 * rounds (`rounds.ts`, ADR 0075): the one piece of state kept between calls,
 * process-wide, found again through the HMAC-sealed `requestState`. A
 * caller that declared the tasks extension gets its run as a task instead
 * (`tasks.ts`, ADR 0083), over the same rounds.
 */
import { randomBytes } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  type CallToolResult,
  type ClientCapabilities,
  type Implementation,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Answerer } from '../../ports/approval.js';
import { answerOfResponse, approvalElicitation } from './approval-form.js';
import { Rounds, type RoundHooks, type RoundRef } from './rounds.js';
import { declaresTasks, McpTasks, TaskIdParams, tasksNotDeclared, UpdateParams, type TaskEnd } from './tasks.js';
import { TASKS_EXTENSION } from '../../ports/mcp-tasks.js';
import { HttpCalls } from './http-cancel.js';

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

/** A run's hooks: the caller's cancel, a progress line per step or call, and an answerer when the caller can answer approvals. */
export interface McpRunHooks {
  signal: AbortSignal;
  progress?: (message: string) => void;
  /** Set when the caller declared form elicitation: each approval becomes an input request to it (ADR 0075). */
  answerer?: Answerer;
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
  /** Runs waiting for their caller's answer between rounds, and the seal on the state that finds them: from `mcpAsking()`. */
  asking: McpAsking;
  /** Over `--http`, the caller's identity (the `mcp-session-id` the HTTP entry gave it at `initialize`): its calls are in `asking.httpCalls`, found again by its `notifications/cancelled`. */
  caller?: string;
}

export interface McpAsking {
  rounds: Rounds<McpRunResult>;
  seal: RequestStateCodec<RoundRef>;
  /** `bridle_run` calls running as tasks (the tasks extension, ADR 0083), over the same rounds. */
  tasks: McpTasks<McpRunResult>;
  /** In-place calls of HTTP callers, by caller and request id: a 2025 caller's cancel is a POST of its own, to another per-request server (ADR 0089). */
  httpCalls: HttpCalls;
}

/** How long a question waits for the retried call that answers it; the sealed state lives as long. */
export const ANSWER_WAIT_S = 600;
/** Questions one call may ask a 2025 caller (the SDK's shim: one round each; its default, 8, is a short turn's worth). */
const MAX_ROUNDS = 100;

/** How long an ended task stays readable with `tasks/get`, and how often a caller is told to poll. */
export const TASK_TTL_MS = 60 * 60 * 1000;
export const TASK_POLL_MS = 1000;

/**
 * The rounds, a seal with a fresh per-process key (a restarted server cannot read an old state: the caller's retry
 * is refused) and the tasks. `now` stamps the tasks' times.
 */
export function mcpAsking(newId: () => string, now: () => Date, waitS = ANSWER_WAIT_S): McpAsking {
  const rounds = new Rounds<McpRunResult>({ newId, waitMs: waitS * 1000 });
  return {
    rounds,
    seal: createRequestStateCodec<RoundRef>({ key: randomBytes(32), ttlSeconds: waitS, bind: (ctx) => ctx.mcpReq.method }),
    tasks: new McpTasks<McpRunResult>({ rounds, newId, now, ttlMs: TASK_TTL_MS, pollIntervalMs: TASK_POLL_MS }),
    httpCalls: new HttpCalls(),
  };
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

/**
 * Progress as the caller asked for it: one notification per line, `progress` counting up, sent in order; `sent`
 * resolves once every line so far is out, so the result never overtakes its last progress (a client drops
 * progress that arrives after the result).
 */
function progressOf(ctx: ServerContext): { send: (message: string) => void; sent: () => Promise<void> } | undefined {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return undefined;
  let n = 0;
  let chain = Promise.resolve();
  const send = (message: string) => {
    const params = { progressToken: token, progress: ++n, message };
    chain = chain.then(() => ctx.mcpReq.notify({ method: 'notifications/progress', params })).catch(() => undefined);
  };
  return { send, sent: () => chain };
}

const envelopeOf = (ctx: ServerContext) => (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;

/** Whether the caller declared form elicitation: in this request's envelope (2026-07-28), or at `initialize` (2025). Contract: pure. */
export function canAnswer(ctx: ServerContext, server: McpServer): boolean {
  const caps = (envelopeOf(ctx)[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined) ?? server.server.getClientCapabilities();
  const e = caps?.elicitation;
  // An empty `elicitation` declares form mode (the spec's default).
  return e !== undefined && (e.form !== undefined || e.url === undefined);
}

/** Who answered, in the log: `mcp:<the client's name>`. */
function callerOf(ctx: ServerContext, server: McpServer): string {
  const info = (envelopeOf(ctx)[CLIENT_INFO_META_KEY] as Implementation | undefined) ?? server.server.getClientVersion();
  const name = typeof info?.name === 'string' ? info.name.replace(/[^\w.@/-]/g, '').slice(0, 64) : '';
  return `mcp:${name || 'client'}`;
}

/** The sealed state of a retried call, checked here (the 2025 shim's re-entry passes it through unverified). */
async function refOf(o: BridleMcpOptions, ctx: ServerContext): Promise<RoundRef | undefined | 'invalid'> {
  const raw = ctx.mcpReq.requestState();
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') return 'invalid';
  try {
    const ref = await o.asking.seal.verify(raw, ctx);
    return typeof ref?.run === 'string' && Number.isInteger(ref.seq) ? ref : 'invalid';
  } catch {
    return 'invalid';
  }
}

const notWaiting = () => refusedResult(new McpRunRefused('NO_SUCH_QUESTION', 'no bridle run is waiting for this answer (answered already, cancelled, timed out, or the server restarted)'));

const requestOf = (args: z.infer<typeof RunInput>): McpRunRequest => ({ prompt: args.prompt, ...(args.session !== undefined ? { session: args.session } : {}) });

/** The run a call starts, with the caller as answerer when it can answer. */
function starter(o: BridleMcpOptions, req: McpRunRequest, answerable: boolean): (h: RoundHooks) => Promise<McpRunResult> {
  return (h) => o.run(req, { signal: h.signal, progress: h.progress, ...(answerable ? { answerer: h.answerer } : {}) });
}

/**
 * A run parked between rounds is cancelled when the request that asked goes on to be cancelled: on a 2025
 * connection the SDK's shim asks the question within that one request, so the caller's `notifications/cancelled`
 * (or its connection closing) comes on its signal after the round has ended. A 2026-07-28 request has been answered
 * by then, and its signal never aborts: that caller's run waits for the retry, or for the question's time.
 */
function cancelOnAbort(rounds: Rounds<McpRunResult>, run: string, signal: AbortSignal): void {
  const cancel = () => void rounds.cancel(run, 'mcp client');
  if (signal.aborted) return cancel();
  signal.addEventListener('abort', cancel, { once: true });
  void rounds.ended(run)?.finally(() => signal.removeEventListener('abort', cancel)).catch(() => undefined);
}

async function runTool(o: BridleMcpOptions, server: McpServer, args: z.infer<typeof RunInput>, ctx: ServerContext): Promise<CallToolResult> {
  const sink = progressOf(ctx);
  const progress = sink?.send;
  const { rounds, seal } = o.asking;
  // An HTTP caller's cancel may come to another server (its own POST): the call is kept where that one finds it.
  const cancelled = new AbortController();
  const forget = o.caller !== undefined ? o.asking.httpCalls.add(o.caller, ctx.mcpReq.id, () => cancelled.abort(new Error('cancelled by the client'))) : () => undefined;
  const signal = o.caller !== undefined ? AbortSignal.any([ctx.mcpReq.signal, cancelled.signal]) : ctx.mcpReq.signal;
  try {
    const ref = await refOf(o, ctx);
    if (ref === 'invalid') return notWaiting();
    const by = callerOf(ctx, server);
    const answerable = canAnswer(ctx, server);
    const step = ref
      ? rounds.resume(ref, (q) => answerOfResponse(inputResponse(ctx.mcpReq.inputResponses, 'approval'), by, q.form), signal, progress)
      : rounds.begin(starter(o, requestOf(args), answerable), signal, progress);
    if (!step) return notWaiting();
    const s = await step;
    await sink?.sent();
    if (s.kind === 'done') return runResultOf(s.result);
    cancelOnAbort(o.asking.rounds, s.ref.run, signal);
    return inputRequired({ inputRequests: { approval: inputRequired.elicit(approvalElicitation(s.question)) }, requestState: await seal.mint(s.ref, ctx) }) as unknown as CallToolResult;
  } catch (err) {
    if (err instanceof McpRunRefused) return refusedResult(err);
    throw err;
  } finally {
    forget();
  }
}

/**
 * An HTTP caller's `notifications/cancelled` cancels that caller's call held by another per-request server (ADR 0089).
 * It replaces the SDK's own handler, through its public API: every call of an HTTP caller is in the process-wide
 * registry, and this fresh server holds no request of its own to abort. Over stdio (no caller) the SDK's stays.
 */
function cancelAcrossRequests(o: BridleMcpOptions, server: McpServer): void {
  const caller = o.caller;
  if (caller === undefined) return;
  server.server.setNotificationHandler('notifications/cancelled', (n) => {
    const id = n.params.requestId;
    if (id !== undefined) o.asking.httpCalls.cancel(caller, id);
  });
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

/** How a task's run ends: the in-place call's result (a turn that did not complete is a tool error), or cancelled. */
function taskEnd(r: McpRunResult, cancelled: boolean): TaskEnd {
  return { kind: 'result', result: runResultOf(r), cancelled: cancelled && r.reason === 'aborted' };
}

function taskEndOfError(err: unknown): TaskEnd {
  if (err instanceof McpRunRefused) return { kind: 'result', result: refusedResult(err), cancelled: false };
  return { kind: 'failed', message: `bridle: the run failed: ${(err as Error)?.message ?? String(err)}` };
}

const tasksDeclared = (ctx: ServerContext, server: McpServer) => declaresTasks(envelopeOf(ctx)[CLIENT_CAPABILITIES_META_KEY], server.server.getClientCapabilities());

type RawHandler = (request: { method: string; params?: Record<string, unknown> }, ctx: ServerContext) => Promise<unknown>;

/**
 * The tasks extension on the v2 server SDK, which has no runtime for it (ADR 0083): a `bridle_run` call from a
 * client that declared the extension, and that is not the retry of an in-place call's round, is answered with the
 * task before the SDK's `tools/call` wrapper sees it (that wrapper checks every result against `CallToolResult`, which
 * a task is not); every other call goes through the wrapper as before. `tasks/get`, `tasks/update` and
 * `tasks/cancel` are custom-schema handlers, refused -32021 to a request whose client did not declare it.
 */
function serveTasks(o: BridleMcpOptions, server: McpServer): void {
  const low = server.server as unknown as {
    _getRequestHandler(method: string): RawHandler | undefined;
    _wrapHandler(method: string, handler: RawHandler): RawHandler;
    removeRequestHandler(method: string): void;
    setRequestHandler(method: string, handler: RawHandler): void;
  };
  const low2 = server.server as unknown as {
    setRequestHandler(method: string, schemas: { params: z.ZodType }, handler: (params: Record<string, unknown>, ctx: ServerContext) => Promise<Record<string, unknown>>): void;
  };
  const inPlace = low._getRequestHandler('tools/call');
  if (!inPlace) throw new Error('bridle mcp: tools/call is not registered before the tasks extension');
  const wrap = low._wrapHandler;
  // The SDK wraps what is set here in its result check: this one handler goes in as it is (it calls the wrapped one).
  low._wrapHandler = (method, handler) => (method === 'tools/call' ? handler : wrap.call(low, method, handler));
  try {
    low.removeRequestHandler('tools/call');
    low.setRequestHandler('tools/call', async (request, ctx) => {
      const args = RunInput.safeParse(request.params?.arguments);
      if (request.params?.name !== 'bridle_run' || !args.success || !tasksDeclared(ctx, server) || ctx.mcpReq.requestState() !== undefined) return inPlace(request, ctx);
      const start = starter(o, requestOf(args.data), canAnswer(ctx, server));
      return o.asking.tasks.create({ start, by: callerOf(ctx, server), end: taskEnd, endOfError: taskEndOfError });
    });
  } finally {
    low._wrapHandler = wrap;
  }
  // Gated before the params are read: a client that did not declare the extension is told that, whatever it sent.
  const gated = <P>(method: string, schema: z.ZodType<P>, answer: (p: P, ctx: ServerContext) => Record<string, unknown>) =>
    low2.setRequestHandler(method, { params: z.looseObject({}) }, async (raw, ctx) => {
      if (!tasksDeclared(ctx, server)) throw tasksNotDeclared(method);
      const p = schema.safeParse(raw);
      if (!p.success) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `invalid ${method} params: ${z.prettifyError(p.error)}`);
      return answer(p.data, ctx);
    });
  gated('tasks/get', TaskIdParams, (p) => o.asking.tasks.get(p.taskId));
  // The SDK lifts `inputResponses` out of the params into the context, as it does for a retried call.
  gated('tasks/update', UpdateParams, (p, ctx) => o.asking.tasks.update(p.taskId, p.inputResponses ?? ctx.mcpReq.inputResponses ?? {}));
  gated('tasks/cancel', TaskIdParams, (p) => o.asking.tasks.cancel(p.taskId));
}

/** Contract: a fresh server each call, holding nothing between calls but what `o.asking` holds; every run goes through `o.run`. */
export function createBridleMcpServer(o: BridleMcpOptions): McpServer {
  const capabilities = { tools: {}, resources: {}, extensions: { [TASKS_EXTENSION]: {} } };
  const server = new McpServer({ name: 'bridle', title: 'bridle', version: o.version }, { capabilities, inputRequired: { maxRounds: MAX_ROUNDS, roundTimeoutMs: ANSWER_WAIT_S * 1000 } });
  server.registerTool(
    'bridle_run',
    {
      title: 'Run a bridle agent session',
      description: `Runs a bridle coding agent on a task until it ends its turn, and returns its final answer with the session id and log path. Pass the session id back to continue that session. Runs under ${o.describePolicy}.`,
      inputSchema: RunInput,
      outputSchema: RunOutput,
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
    },
    (args, ctx) => runTool(o, server, args, ctx),
  );
  serveTasks(o, server);
  cancelAcrossRequests(o, server);
  sessionResource(o, server, 'log');
  sessionResource(o, server, 'transcript');
  return server;
}
