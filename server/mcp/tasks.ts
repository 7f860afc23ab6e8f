/**
 * The MCP tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) for
 * `bridle_run` (ADR 0083): a call from a client that declared the extension
 * answers at once with the task (a flat `CreateTaskResult`); the run goes on
 * here, across the same rounds an in-place call uses (`rounds.ts`). The
 * caller polls `tasks/get` (status, the last progress line as
 * `statusMessage`, the result inlined once completed), answers an approval
 * with `tasks/update` (`input_required` carries the same form as the
 * in-place call's `input_required`, and the same rules: only an accepted
 * `approve` allows, once), and cancels with `tasks/cancel` (the turn is
 * cancelled as a cancelled call's is; the task settles `cancelled` once the
 * log is closed). Tasks live in this process's memory for `ttlMs` after
 * they end. The clock and the ids are handed in.
 */
import { inputResponse, MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode, type CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { answerOfResponse, approvalElicitation } from './approval-form.js';
import { declaresTasksExtension, TASKS_EXTENSION, type TaskStatus } from '../../ports/mcp-tasks.js';
import { RoundCancel, type AskedQuestion, type RoundHooks, type RoundRef, type Rounds, type RoundStep } from './rounds.js';


/** How a task's run ended, as the tool's result or a protocol failure. */
export type TaskEnd = { kind: 'result'; result: CallToolResult; cancelled: boolean } | { kind: 'failed'; message: string };

export interface McpTasksOptions<R> {
  rounds: Rounds<R>;
  newId(): string;
  now(): Date;
  /** How long an ended task stays readable. */
  ttlMs: number;
  pollIntervalMs: number;
}

interface Asking {
  ref: RoundRef;
  question: AskedQuestion;
  answered(responses: Record<string, unknown>): void;
}

interface TaskRecord {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  result?: CallToolResult;
  error?: { code: number; message: string };
  asking?: Asking;
  abort: AbortController;
  runId?: string;
}

/** What a task's start hands the run: the rounds' hooks, and how the run's end becomes the task's. */
export interface TaskStart<R> {
  start(hooks: RoundHooks): Promise<R>;
  /** Who answers, in the log (`mcp:<client>`). */
  by: string;
  end(result: R, cancelled: boolean): TaskEnd;
  /** A run that could not start or failed: a tool error (a named refusal) or a protocol failure. */
  endOfError(err: unknown): TaskEnd;
}

const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

export class McpTasks<R> {
  private readonly tasks = new Map<string, TaskRecord>();

  constructor(private readonly o: McpTasksOptions<R>) {}

  /** Contract: returns the new task at once (`working`); the run goes on in the background. */
  create(s: TaskStart<R>): Record<string, unknown> {
    const at = this.o.now().toISOString();
    const t: TaskRecord = { taskId: this.o.newId(), status: 'working', createdAt: at, lastUpdatedAt: at, abort: new AbortController() };
    this.tasks.set(t.taskId, t);
    const progress = (m: string) => this.touch(t, { statusMessage: m });
    void this.drive(t, s, this.o.rounds.begin(s.start, t.abort.signal, progress), progress);
    return { resultType: 'task', ...this.base(t) };
  }

  /** `tasks/get`: the task, its input requests while it waits, its result or error once ended. Contract: unknown id is -32602. */
  get(taskId: string): Record<string, unknown> {
    const t = this.find(taskId);
    return {
      resultType: 'complete',
      ...this.base(t),
      ...(t.status === 'input_required' && t.asking ? { inputRequests: { approval: { method: 'elicitation/create', params: approvalElicitation(t.asking.question) } } } : {}),
      ...(t.status === 'completed' && t.result ? { result: t.result } : {}),
      ...(t.status === 'failed' && t.error ? { error: t.error } : {}),
    };
  }

  /** `tasks/update`: the answers to the task's input requests. Contract: a task not waiting for input is -32602; each question is answered once. */
  update(taskId: string, inputResponses: Record<string, unknown>): Record<string, unknown> {
    const t = this.find(taskId);
    const asking = t.asking;
    if (t.status !== 'input_required' || !asking) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `task ${taskId} is not waiting for input (it is ${t.status})`);
    t.asking = undefined;
    this.touch(t, { status: 'working' });
    asking.answered(inputResponses);
    return { resultType: 'complete' };
  }

  /** `tasks/cancel`: cancels the turn; an ended task is left as it is. Contract: an empty ack either way. */
  cancel(taskId: string): Record<string, unknown> {
    const t = this.find(taskId);
    if (!TERMINAL.has(t.status) && !t.abort.signal.aborted) {
      t.abort.abort(new RoundCancel('mcp client'));
      if (t.runId) this.o.rounds.cancel(t.runId, 'mcp client');
    }
    return { resultType: 'complete' };
  }

  get size(): number {
    return this.tasks.size;
  }

  private find(taskId: string): TaskRecord {
    const t = this.tasks.get(taskId);
    if (!t) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `no task ${taskId} (unknown, or its ttl passed)`);
    return t;
  }

  private base(t: TaskRecord): Record<string, unknown> {
    return {
      taskId: t.taskId,
      status: t.status,
      ...(t.statusMessage !== undefined ? { statusMessage: t.statusMessage } : {}),
      createdAt: t.createdAt,
      lastUpdatedAt: t.lastUpdatedAt,
      ttlMs: this.o.ttlMs,
      pollIntervalMs: this.o.pollIntervalMs,
    };
  }

  private touch(t: TaskRecord, change: Partial<Pick<TaskRecord, 'status' | 'statusMessage'>>): void {
    if (TERMINAL.has(t.status)) return;
    Object.assign(t, change);
    t.lastUpdatedAt = this.o.now().toISOString();
  }

  private async drive(t: TaskRecord, s: TaskStart<R>, first: Promise<RoundStep<R>>, progress: (m: string) => void): Promise<void> {
    let end: TaskEnd;
    try {
      let step: RoundStep<R> = await first;
      while (step.kind === 'asking') step = await this.ask(t, s, step, progress);
      end = s.end(step.result, t.abort.signal.aborted);
    } catch (err) {
      end = s.endOfError(err);
    }
    this.settle(t, end);
  }

  /** Waits for the caller's answer (or the run's end: cancelled, timed out), then goes on to the next round. */
  private async ask(t: TaskRecord, s: TaskStart<R>, step: Extract<RoundStep<R>, { kind: 'asking' }>, progress: (m: string) => void): Promise<RoundStep<R>> {
    t.runId = step.ref.run;
    const ended = this.o.rounds.ended(step.ref.run);
    const answer = new Promise<Record<string, unknown>>((resolve) => {
      t.asking = { ref: step.ref, question: step.question, answered: resolve };
    });
    this.touch(t, { status: 'input_required' });
    const done = ended ? ended.then((result) => ({ kind: 'done' as const, result })) : new Promise<never>(() => undefined);
    const got = await Promise.race([answer.then((responses) => ({ kind: 'answer' as const, responses })), done]);
    if (got.kind === 'done') {
      t.asking = undefined;
      return got;
    }
    const next = this.o.rounds.resume(step.ref, (q) => answerOfResponse(inputResponse(got.responses, 'approval'), s.by, q.form), t.abort.signal, progress);
    return next ?? done;
  }

  private settle(t: TaskRecord, end: TaskEnd): void {
    t.asking = undefined;
    if (end.kind === 'failed') Object.assign(t, { status: 'failed', error: { code: ProtocolErrorCode.InternalError, message: end.message } });
    else if (end.cancelled) t.status = 'cancelled';
    else Object.assign(t, { status: 'completed', result: end.result });
    t.lastUpdatedAt = this.o.now().toISOString();
    const timer = setTimeout(() => this.tasks.delete(t.taskId), this.o.ttlMs);
    timer.unref?.();
  }
}

/** Whether a request's client declared the extension: in the request's envelope (2026-07-28), or at `initialize` (2025). Contract: pure. */
export function declaresTasks(envelopeCaps: unknown, sessionCaps: unknown): boolean {
  return declaresTasksExtension(envelopeCaps) || declaresTasksExtension(sessionCaps);
}

/** The refusal of a task method to a client that did not declare the extension (SEP-2575's -32021). */
export const tasksNotDeclared = (method: string) =>
  new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } }, `${method} needs the ${TASKS_EXTENSION} extension declared in the request's client capabilities`);

export const TaskIdParams = z.object({ taskId: z.string().min(1).max(200) }).passthrough();
export const UpdateParams = z.object({ taskId: z.string().min(1).max(200), inputResponses: z.record(z.string(), z.unknown()).optional() }).passthrough();
