/**
 * The client side of the MCP tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, the 2026-07-28 wire;
 * ADR 0084). A server that declares the extension under `capabilities.extensions` decides which calls become
 * tasks: it answers `tools/call` with a `CreateTaskResult` (`resultType: "task"`). bridle declares the extension
 * back on such a connection only, polls `tasks/get` at the server's `pollIntervalMs` (kept within 0.1–5 s),
 * passes the status message on as the call's progress (display only), reads the inlined result as any call's
 * result, asks a server's input requests of the session (ADR 0065) and answers them with `tasks/update`, and sends
 * `tasks/cancel` when the call is aborted.
 *
 * The SDK's client (2.x) refuses a result of type `task` before any schema of the caller's sees it, so the
 * connection's transport goes through `tapForTasks`: it adds the extension to the client capabilities of each
 * outbound request's `_meta` envelope, and turns a `task` answer to a `tools/call` into a `complete` one that
 * carries the task under `_meta[TASK_MARK]` (and `isError`, so the SDK checks no output schema against it).
 * `taskOf` finds it there. The task methods answer `complete` results, which the SDK passes to a schema of
 * bridle's (they are not in its table of spec results).
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Transport } from '@modelcontextprotocol/client';
import { z } from 'zod';
import type { ToolAnswer, ToolQuestion } from '../../ports/tools.js';
import { elicitResult, questionOf } from './elicitation.js';
import { MIN_POLL_MS, MAX_POLL_MS, type TaskClient } from './tasks.js';
import { TASK_STATUSES, TASKS_EXTENSION } from '../../ports/mcp-tasks.js';
/** Where the 2026-07-28 envelope carries the client's capabilities. */
const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
/** The `_meta` key under which the tap hands a created task on to `taskOf`; no server writes it. */
export const TASK_MARK = 'dev.bridle/task';
const DEFAULT_POLL_MS = 1_000;
/** How long an abort waits for the server to take its `tasks/cancel`. */
const CANCEL_WAIT_MS = 2_000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface TaskTap {
  /** The transport to hand the SDK's client. */
  readonly transport: Transport;
  /** From now on, requests declare the extension and task answers to `tools/call` reach `taskOf`. */
  enable(): void;
  /** `tools/call` requests sent declaring the extension and not yet answered nor cancelled. */
  readonly pending: number;
}

type Message = Record<string, unknown>;

/** Contract: wraps `inner` without copying it; until `enable()`, every message passes unchanged. */
export function tapForTasks(inner: Transport): TaskTap {
  let on = false;
  // The ids of the tools/call requests sent declaring the extension, until answered.
  const calls = new Set<unknown>();
  let deliver: Transport['onmessage'];

  const declare = (m: Message): Message => {
    const params = m.params;
    const meta = isObject(params) ? params._meta : undefined;
    const caps = isObject(meta) ? meta[CLIENT_CAPABILITIES] : undefined;
    // Only the 2026-07-28 envelope declares per request; a 2025 connection's capabilities were fixed at initialize.
    if (!isObject(params) || !isObject(meta) || !isObject(caps)) return m;
    const extensions = { ...(isObject(caps.extensions) ? caps.extensions : {}), [TASKS_EXTENSION]: {} };
    if (m.method === 'tools/call' && m.id !== undefined) calls.add(m.id);
    return { ...m, params: { ...params, _meta: { ...meta, [CLIENT_CAPABILITIES]: { ...caps, extensions } } } };
  };

  const lift = (m: Message): Message => {
    if (m.id === undefined || !calls.has(m.id) || (!('result' in m) && !('error' in m))) return m;
    calls.delete(m.id);
    const result = m.result;
    if (!isObject(result) || result.resultType !== 'task') return m;
    return { ...m, result: { resultType: 'complete', content: [], isError: true, _meta: { [TASK_MARK]: result } } };
  };

  // A call cancelled before its answer is forgotten: by its `notifications/cancelled` (stdio), or by its request's own
  // signal (a 2026-07-28 request on its own HTTP stream, which the SDK aborts instead of sending a notification).
  const forgetCancelled = (m: Message, requestSignal: AbortSignal | undefined) => {
    if (m.method === 'notifications/cancelled' && isObject(m.params)) calls.delete(m.params.requestId);
    else if (m.method === 'tools/call' && calls.has(m.id) && requestSignal) {
      const id = m.id;
      if (requestSignal.aborted) calls.delete(id);
      else requestSignal.addEventListener('abort', () => calls.delete(id), { once: true });
    }
  };

  const send: Transport['send'] = (message, options) => {
    const out = on && isObject(message) && typeof (message as Message).method === 'string' ? declare(message as Message) : message;
    if (isObject(out) && typeof (out as Message).method === 'string') forgetCancelled(out as Message, options?.requestSignal);
    return inner.send(out as typeof message, options);
  };

  const transport = new Proxy(inner, {
    get(target, prop) {
      if (prop === 'send') return send;
      if (prop === 'onmessage') return deliver;
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
    set(target, prop, value) {
      if (prop !== 'onmessage') return Reflect.set(target, prop, value, target);
      deliver = value as Transport['onmessage'];
      const handler = deliver;
      target.onmessage = handler ? ((m, extra) => handler((isObject(m) ? lift(m as Message) : m) as typeof m, extra)) as Transport['onmessage'] : undefined;
      return true;
    },
  });
  return {
    transport,
    enable: () => void (on = true),
    get pending() {
      return calls.size;
    },
  };
}

const Task = z.looseObject({
  taskId: z.string().min(1),
  status: z.enum(TASK_STATUSES),
  statusMessage: z.string().optional(),
  pollIntervalMs: z.number().optional(),
});
const DetailedTask = z.looseObject({
  ...Task.shape,
  inputRequests: z.record(z.string(), z.looseObject({ method: z.string(), params: z.unknown().optional() })).optional(),
  result: z.looseObject({ content: z.array(z.unknown()).optional(), isError: z.boolean().optional() }).optional(),
  error: z.looseObject({ code: z.number().optional(), message: z.string().optional() }).optional(),
});
const Ack = z.looseObject({});
type TaskInfo = z.infer<typeof Task>;
export type TaskResult = NonNullable<z.infer<typeof DetailedTask>['result']>;

/** Contract: pure. The task a tapped `tools/call` answer carries, if it carries one (and is well formed). */
export function taskOf(result: unknown): TaskInfo | undefined {
  const meta = isObject(result) ? result._meta : undefined;
  const mark = isObject(meta) ? meta[TASK_MARK] : undefined;
  if (mark === undefined) return undefined;
  const parsed = Task.safeParse(mark);
  if (!parsed.success) throw new TaskProtocolError('its task answer to tools/call is not what the tasks extension says');
  return parsed.data;
}

/** The server broke off the task (`failed`, `cancelled` by itself, or a malformed answer); the message says which. */
export class TaskProtocolError extends Error {
  override readonly name = 'TaskProtocolError';
}

export interface FollowOptions {
  signal: AbortSignal;
  timeout: number;
  /** The row asking, for the questions' `from`. */
  from: string;
  /** The status messages, counted, as the call's progress (for display only, never logged). */
  progress?: (p: { progress: number; message?: string }) => void;
  /** Whom a server's input request is asked of (ADR 0065); absent, each is declined. */
  ask?: (question: ToolQuestion, signal?: AbortSignal) => Promise<ToolAnswer>;
}

const pollMs = (t: TaskInfo) => Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, t.pollIntervalMs ?? DEFAULT_POLL_MS));

/**
 * Contract: polls the created `task` until it ends; resolves with the tool's result inlined by `completed` (a tool
 * error is one with `isError`); rejects with `TaskProtocolError` for `failed`, a `cancelled` bridle did not ask for,
 * or a completed task without a result; with the SDK's error for a refused request; with `signal`'s reason after
 * sending `tasks/cancel` (best effort, at most `CANCEL_WAIT_MS`).
 */
export async function followTask(client: TaskClient, created: TaskInfo, o: FollowOptions): Promise<TaskResult> {
  const opts = { signal: o.signal, timeout: o.timeout };
  const { taskId } = created;
  let task: z.infer<typeof DetailedTask> = created;
  let polls = 0;
  try {
    for (;;) {
      if (task.status === 'completed') {
        if (!task.result) {
          task = await client.request({ method: 'tasks/get', params: { taskId } }, DetailedTask, opts);
          if (!task.result) throw new TaskProtocolError(`its task ${taskId} completed without a result`);
        }
        return task.result;
      }
      if (task.status === 'failed') throw new TaskProtocolError(`its task ${taskId} failed: ${task.error?.message ?? task.statusMessage ?? 'no reason given'}`);
      if (task.status === 'cancelled') throw new TaskProtocolError(`it cancelled the task ${taskId}${task.statusMessage ? `: ${task.statusMessage}` : ''}`);
      if (task.status === 'input_required' && task.inputRequests && Object.keys(task.inputRequests).length > 0) {
        const inputResponses = await answers(task.inputRequests, o);
        await client.request({ method: 'tasks/update', params: { taskId, inputResponses } }, Ack, opts);
      } else {
        await delay(pollMs(task), undefined, { signal: o.signal });
      }
      task = await client.request({ method: 'tasks/get', params: { taskId } }, DetailedTask, opts);
      o.progress?.({ progress: ++polls, ...(task.statusMessage ? { message: task.statusMessage } : {}) });
    }
  } catch (err) {
    if (!o.signal.aborted) throw err;
    await cancelTask(client, taskId);
    throw o.signal.reason ?? err;
  }
}

/** Each input request asked in turn (bridle asks one question at a time); with nobody to ask, declined. */
async function answers(requests: Record<string, { method: string; params?: unknown }>, o: FollowOptions): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [key, r] of Object.entries(requests)) {
    if (r.method !== 'elicitation/create') throw new TaskProtocolError(`its task asked for ${r.method}, which bridle does not offer`);
    out[key] = o.ask ? elicitResult(await o.ask(questionOf(o.from, r.params), o.signal)) : { action: 'decline' };
  }
  return out;
}

async function cancelTask(client: TaskClient, taskId: string): Promise<void> {
  await client.request({ method: 'tasks/cancel', params: { taskId } }, Ack, { signal: AbortSignal.timeout(CANCEL_WAIT_MS), timeout: CANCEL_WAIT_MS }).catch(() => undefined);
}
