/**
 * The WebSocket protocol of `bridle serve`: JSON-RPC 2.0 envelopes, the
 * params of every method and notification, and the error codes. Method and
 * field names are a contract (docs/protocol.md); every incoming message is
 * parsed with these schemas before anything acts on it.
 */
import { z } from 'zod';
import { Change } from '../tools/diff.js';
import { RenderIntentSchema } from '../tools/present.js';
import { Entry } from '../log/entries.js';
import { QuestionField } from '../log/entries-questions.js';

export const JSONRPC = '2.0' as const;

/** Standard JSON-RPC codes, then this server's own (the -32000…-32099 range). */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** No session with that id in this server. */
  UnknownSession: -32001,
  /** `approval/respond` for a call that is not waiting (already answered, cancelled, or never asked). */
  NotPending: -32002,
  /** The session could not be opened (a cwd the server does not allow, an unusable model, …); `data.reason` names why. */
  CreateFailed: -32003,
  /** `approval/respond` from a client that is not attached to that session. */
  NotAttached: -32004,
  /** `session/create` while the server holds its `--max-sessions` sessions. */
  SessionLimit: -32005,
  /** The session crashed and takes no more input (`SessionCrashedError`); its log stays readable. */
  SessionCrashed: -32006,
  /** `session/input` whose entry could not be saved (`LOG_NOT_DURABLE`, `LOG_APPEND_FAILED`): it was not received. */
  NotSaved: -32007,
  /** A method only the worker running the session can serve, sent to a worker that relays it (ADR 0030). */
  Elsewhere: -32008,
  /** `session/fork` that cannot be made as asked (a point inside a turn, a bad answer); `data.code` is the fork's own (ADR 0029). */
  ForkRefused: -32009,
} as const;

/**
 * The stable name of each failure of this server's own codes, sent as
 * `error.data.reason`: several reasons share `CreateFailed`, and a name
 * reads better than a number in a client's code.
 */
export const ErrorReason = z.enum([
  'UNKNOWN_SESSION',
  'NOT_PENDING',
  'NOT_ATTACHED',
  'SESSION_LIMIT',
  'CWD_NOT_ALLOWED',
  'CWD_NOT_FOUND',
  'CWD_NOT_A_DIRECTORY',
  'MODEL_UNAVAILABLE',
  'POLICY_WIDENED',
  'WORKSPACE_MODULE',
  'LOOP_MISMATCH',
  'LOOP_UNAVAILABLE',
  'OPEN_FAILED',
  'SESSION_CRASHED',
  'SESSION_LOCKED',
  'SESSION_NOT_SAVED',
  'SESSION_EXISTS',
  'SESSION_NOT_RESUMABLE',
  'SESSION_ELSEWHERE',
  'FORK_REFUSED',
  'FORK_UNAVAILABLE',
]);
export type ErrorReason = z.infer<typeof ErrorReason>;
/** The same reasons as a value to write them with: `Reason.SESSION_LOCKED`. */
export const Reason = ErrorReason.enum;

export const RequestId = z.union([z.string(), z.number(), z.null()]);
export type RequestId = z.infer<typeof RequestId>;

/** A request (with `id`) or a notification (without). Params are by name. */
export const RpcRequest = z.strictObject({
  jsonrpc: z.literal(JSONRPC),
  method: z.string(),
  params: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional(),
  id: RequestId.optional(),
});
export type RpcRequest = z.infer<typeof RpcRequest>;

const SessionId = z.string().min(1);
export const InputMode = z.enum(['followup', 'steer', 'inject']);

/** Params of each client → server method. Unknown keys are refused: a typo is not an omission. */
export const MethodParams = {
  'session/create': z.strictObject({
    cwd: z.string().min(1).optional(),
    model: z.string().min(1).optional(),
    /** A subagent's: its id (a name beside its parent's log), depth and parent, as its `session/start` records them. */
    id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/).optional(),
    depth: z.int().min(0).max(64).optional(),
    parent: z.string().min(1).max(400).optional(),
    /** The W3C trace context the new session's spans hang under (ADR 0055); logged in its `session/start`. */
    traceparent: z.string().regex(/^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/).optional(),
  }),
  'session/list': z.strictObject({}),
  'session/attach': z.strictObject({ sessionId: SessionId, fromSeq: z.int().positive().optional() }),
  'session/input': z.strictObject({ sessionId: SessionId, text: z.string(), mode: InputMode.optional() }),
  'session/cancel': z.strictObject({ sessionId: SessionId }),
  'session/compact': z.strictObject({ sessionId: SessionId }),
  'session/snapshot': z.strictObject({ sessionId: SessionId }),
  /** What the session's subagent tree has cost so far (ADR 0048). */
  'session/cost': z.strictObject({ sessionId: SessionId }),
  'session/close': z.strictObject({ sessionId: SessionId }),
  /** `values`: the filled-in form of a tool's question (an `approval/request` with `form`, ADR 0065). */
  'approval/respond': z.strictObject({
    sessionId: SessionId,
    callId: z.string().min(1),
    outcome: z.enum(['allowed-once', 'rejected']),
    values: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  }),
  /** A new session from a hosted one's log (ADR 0029): up to the last completed turn at or before `at`, or with one decision answered anew. */
  'session/fork': z.strictObject({ sessionId: SessionId, at: z.int().positive().optional(), answer: z.string().optional() }),
} as const;
export type Method = keyof typeof MethodParams;
export type ParamsOf<M extends Method> = z.infer<(typeof MethodParams)[M]>;
export const METHODS = Object.keys(MethodParams) as Method[];
export const isMethod = (m: string): m is Method => Object.hasOwn(MethodParams, m);

/** One machine actor of a session's tree, as `session/snapshot` and `session/state` report it. */
export const ActorState = z.strictObject({
  /** The actor's id in its parent (`session` for the root, `turn`, `step`, `t1.s1.c1`). */
  id: z.string(),
  /** The machine's id, which names its diagram: `session`, `turn`, `step`, `tool-call`. */
  machine: z.string(),
  value: z.unknown(),
  status: z.string(),
  parent: z.string().nullable(),
});
export type ActorState = z.infer<typeof ActorState>;

export const SessionSummary = z.strictObject({
  sessionId: z.string(),
  cwd: z.string(),
  model: z.string(),
  value: z.unknown(),
  lastSeq: z.int().nonnegative(),
  attached: z.int().nonnegative(),
});
export type SessionSummary = z.infer<typeof SessionSummary>;

export const Snapshot = z.strictObject({
  sessionId: z.string(),
  /** The session machine's state value. */
  value: z.unknown(),
  /** The session and every running machine under it, parents first. */
  actors: z.array(ActorState),
  /** The last entry that is durable (and so has been or will be sent as `session/entry`). */
  durableSeq: z.int().nonnegative(),
});
export type Snapshot = z.infer<typeof Snapshot>;

export const ApprovalRequest = z.strictObject({
  sessionId: z.string(),
  callId: z.string(),
  tool: z.string(),
  /** The call's arguments, parsed (they passed validation before anyone is asked). */
  args: z.unknown(),
  /** Why it needs approval. */
  reason: z.string(),
  /** The call as the tool renders it for people, e.g. `write_file a.txt (2 lines)`. */
  presented: z.string(),
  /** For `edit_file` and `write_file`: the change as diff lines (tools/diff.ts), so whoever decides sees what is written. */
  change: Change.optional(),
  /** A tool's question (tool `question`, callId `<call>.q<n>`, ADR 0065): the form to fill, answered with `values`. */
  form: z.strictObject({ fields: z.array(QuestionField) }).optional(),
});
export type ApprovalRequest = z.infer<typeof ApprovalRequest>;

/** Params of each server → client notification. */
export const NotificationParams = {
  /** With a `tool/result`: its render intent (ADR 0067), as the session's tools present the call and its result. */
  'session/entry': z.strictObject({ sessionId: z.string(), entry: Entry, intent: RenderIntentSchema.optional() }),
  'session/delta': z.strictObject({ sessionId: z.string(), step: z.string(), chunk: z.record(z.string(), z.unknown()) }),
  'session/state': z.strictObject({ sessionId: z.string(), value: z.unknown(), actors: z.array(ActorState) }),
  /** A running call's progress (an MCP server's report): live, never logged, not replayed on attach (ADR 0065). */
  'session/progress': z.strictObject({ sessionId: z.string(), callId: z.string(), name: z.string(), progress: z.number(), total: z.number().optional(), message: z.string().optional() }),
  'approval/request': ApprovalRequest,
  /**
   * The session's log could not be saved (ADR 0017): a turn ended `error` with `code` (`LOG_NOT_DURABLE`,
   * `LOG_APPEND_FAILED`), or the session crashed on it. Entries past `durableSeq` may be lost; they are not sent.
   */
  'session/unsaved': z.strictObject({ sessionId: z.string(), turn: z.string().optional(), code: z.string(), message: z.string(), durableSeq: z.int().nonnegative(), lastSeq: z.int().nonnegative() }),
  /** The last message about a session, to its attached clients: `session/close` closed it; its log ends at `lastSeq`. */
  'session/closed': z.strictObject({ sessionId: z.string(), lastSeq: z.int().nonnegative() }),
} as const;
export type Notification = keyof typeof NotificationParams;

/** Results of each method. */
export const MethodResults = {
  'session/create': z.strictObject({ sessionId: z.string() }),
  'session/list': z.strictObject({ sessions: z.array(SessionSummary) }),
  'session/attach': z.strictObject({ sessionId: z.string(), fromSeq: z.int().positive(), durableSeq: z.int().nonnegative() }),
  /** Sent once the input's `session/input` entry (at `seq`) is durable (ADR 0021). */
  'session/input': z.strictObject({ accepted: z.literal(true), seq: z.int().positive() }),
  'session/cancel': z.strictObject({ requested: z.literal(true) }),
  'session/compact': z.strictObject({ requested: z.literal(true) }),
  'session/snapshot': Snapshot,
  /**
   * `bridle cost --json`'s report of the session and its subagents' logs (its shape: `CostReport`, log/cost.ts,
   * built here, never read from a client); null when the server prices nothing.
   */
  'session/cost': z.strictObject({ sessionId: z.string(), cost: z.record(z.string(), z.unknown()).nullable() }),
  'session/close': z.strictObject({ closed: z.literal(true) }),
  'approval/respond': z.strictObject({ accepted: z.literal(true) }),
  /** The fork, hosted (attach to it); a re-answered approval's turn goes on in it (ADR 0031), unless it cannot go on (`hosted: false`: `bridle resume` closes it). */
  'session/fork': z.strictObject({ sessionId: z.string(), forkOf: z.strictObject({ session: z.string(), seq: z.int().positive() }), hosted: z.boolean() }),
} as const;
export type ResultOf<M extends Method> = z.infer<(typeof MethodResults)[M]>;

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** A failure a method reports to its caller: becomes a JSON-RPC error response. */
export class RpcFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcFailure';
  }
}

/** A failure of this server's own codes: `data.reason` names it. Its message is the server's own words, never a file's or a tool's. */
export const refusal = (code: number, reason: ErrorReason, message: string) => new RpcFailure(code, message, { reason });

export const response = (id: RequestId, result: unknown) => ({ jsonrpc: JSONRPC, id, result });
export const errorResponse = (id: RequestId, error: RpcError) => ({ jsonrpc: JSONRPC, id, error });
export const notification = (method: Notification, params: unknown) => ({ jsonrpc: JSONRPC, method, params });
