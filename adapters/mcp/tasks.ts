/**
 * The client side of MCP's tasks (SEP-1686, the 2025-11-25 wire; ADR 0076): a tool the server runs as a task — its
 * listing says `execution.taskSupport` `'required'` or `'optional'`, and the server offers `tasks.requests.tools.call` — is
 * called with `task: { ttl }`, which answers at once with the task's id. bridle then asks `tasks/get` every
 * `pollInterval` (the server's, kept within bounds) until the task is done or needs input, passing its status
 * message on as progress, and fetches the tool's result with `tasks/result` (which also carries a server's
 * questions while the task waits for them). A call that is aborted — its deadline, a cancel — sends
 * `tasks/cancel`, so the server stops the work instead of finishing it for nobody. The SDK (2.x) has the
 * messages' schemas but none of this; the schemas below are the fields bridle reads.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import type { McpToolInfo } from './tools.js';

/** How long the server keeps a task's result for bridle: long enough for any call's deadline. */
export const TASK_TTL_MS = 60 * 60_000;
/** The poll interval's bounds: a server's suggestion outside them is brought back within. */
export const MIN_POLL_MS = 100;
export const MAX_POLL_MS = 5_000;
const DEFAULT_POLL_MS = 1_000;
/** How long an abort waits for the server to take its `tasks/cancel`. */
const CANCEL_WAIT_MS = 2_000;

const Task = z.looseObject({
  taskId: z.string().min(1),
  status: z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']),
  statusMessage: z.string().optional(),
  pollInterval: z.number().optional(),
});
const CreateTaskResult = z.looseObject({ task: Task });
/** `tasks/result` answers with the tool's own result; `connection.ts` reads it as any call's. */
const TaskPayload = z.looseObject({ content: z.array(z.unknown()).optional(), isError: z.boolean().optional() });

type Task = z.infer<typeof Task>;

/** What of the SDK's client a task call needs: a request with a result schema of bridle's. */
export interface TaskClient {
  request<S extends z.ZodType>(request: { method: string; params?: Record<string, unknown> }, schema: S, options?: { signal?: AbortSignal; timeout?: number }): Promise<z.infer<S>>;
}

export interface TaskCallOptions {
  signal: AbortSignal;
  timeout: number;
  /** The task's status messages, counted, as the call's progress (for display only). */
  progress?: (p: { progress: number; message?: string }) => void;
}

/**
 * Contract: pure. Whether `tool` is called as a task: its listing allows or requires one, and the server offers
 * tasks for `tools/call` in the capabilities slot of this wire (SEP-1686's `tasks`). The 2026 extension
 * (`io.modelcontextprotocol/tasks`, SEP-2663: server-directed tasks, results inlined in `tasks/get`) is another
 * wire, followed by `tasks-extension.ts` (ADR 0084) when the server answers a call with a task.
 */
export function isTaskTool(tool: McpToolInfo | undefined, capabilities: unknown): boolean {
  const support = tool?.execution?.taskSupport;
  const offered = (capabilities as { tasks?: { requests?: { tools?: { call?: unknown } } } } | undefined)?.tasks?.requests?.tools?.call;
  return (support === 'required' || support === 'optional') && offered !== undefined;
}

const pollMs = (t: Task) => Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, t.pollInterval ?? DEFAULT_POLL_MS));

/**
 * Contract: resolves with the tool's result as `tasks/result` gave it; rejects with the SDK's error for a refused
 * request, or with `signal`'s abort after sending `tasks/cancel` for a task it created (best effort: a server gone
 * or slow to answer does not hold the abort up past `CANCEL_WAIT_MS`).
 */
export async function callAsTask(client: TaskClient, params: Record<string, unknown>, o: TaskCallOptions): Promise<z.infer<typeof TaskPayload>> {
  const opts = { signal: o.signal, timeout: o.timeout };
  let task = (await client.request({ method: 'tools/call', params: { ...params, task: { ttl: TASK_TTL_MS } } }, CreateTaskResult, opts)).task;
  const taskId = task.taskId;
  try {
    let polls = 0;
    while (task.status === 'working') {
      await delay(pollMs(task), undefined, { signal: o.signal });
      task = await client.request({ method: 'tasks/get', params: { taskId } }, Task, opts);
      o.progress?.({ progress: ++polls, ...(task.statusMessage ? { message: task.statusMessage } : {}) });
    }
    // Done, failed, cancelled, or waiting for input: tasks/result gives the outcome (and delivers the server's questions meanwhile).
    return await client.request({ method: 'tasks/result', params: { taskId } }, TaskPayload, opts);
  } catch (err) {
    if (o.signal.aborted) await cancelTask(client, taskId);
    throw err;
  }
}

async function cancelTask(client: TaskClient, taskId: string): Promise<void> {
  await client.request({ method: 'tasks/cancel', params: { taskId } }, z.looseObject({}), { signal: AbortSignal.timeout(CANCEL_WAIT_MS), timeout: CANCEL_WAIT_MS }).catch(() => undefined);
}
