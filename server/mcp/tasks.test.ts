/**
 * `bridle_run` as a task (the tasks extension, ADR 0083), in process, with a
 * stand-in run, against the v2 SDK's `Client` over an in-memory pair: the
 * call answers at once with the task, `tasks/get` inlines the result (and
 * still does after), an approval becomes `input_required` answered with
 * `tasks/update` (only an accepted `approve` allows, once), `tasks/cancel`
 * cancels the run, and a client that did not declare the extension gets the
 * in-place call and -32021 from the task methods. The answers are checked
 * against `@modelcontextprotocol/ext-tasks`' own schemas (another side's
 * reading of SEP-2663), with `resultType` put back (the SDK's client lifts it).
 */
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { CreateTaskResultV2Schema, GetTaskResultV2Schema } from '@modelcontextprotocol/ext-tasks/core/v2';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ApprovalAnswer } from '../../ports/approval.js';
import { createBridleMcpServer, mcpAsking, type BridleMcpOptions, type McpRunHooks, type McpRunResult } from './bridle-mcp.js';
import { RoundCancel } from './rounds.js';
import { TASKS_EXTENSION } from '../../ports/mcp-tasks.js';

type Task = { taskId: string; status: string; [k: string]: unknown };
const done = (answer: string): McpRunResult => ({ sessionId: 's1', log: '/l/s1.jsonl', reason: 'completed', answer });

function options(run: (hooks: McpRunHooks) => Promise<McpRunResult>): BridleMcpOptions {
  let n = 0;
  return {
    version: '0.0.0',
    describePolicy: 'approval policy "ask"',
    run: (_req, hooks) => run(hooks),
    sessions: async () => [],
    log: async () => undefined,
    transcript: async () => undefined,
    asking: mcpAsking(() => `id${++n}`, () => new Date(Date.UTC(2026, 11, 2))),
  };
}

/** A run that asks one approval and ends with what it was told. */
const askingRun = (seen: ApprovalAnswer[]) => async (h: McpRunHooks) => {
  const a = await h.answerer!({ callId: 'c1', name: 'write_file', arguments: '{"path":"a.txt"}', reason: 'writes', presented: 'write a.txt', always: { tool: 'write_file', pattern: '.*' }, signal: h.signal });
  seen.push(a);
  return done(a.outcome);
};

async function connected(o: BridleMcpOptions, tasks = true) {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await createBridleMcpServer(o).connect(a);
  const capabilities = { elicitation: { form: {} }, ...(tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {}) };
  const c = new Client({ name: 'tester', version: '1' }, { capabilities: capabilities as never });
  await c.connect(b);
  const raw = (method: string, params: Record<string, unknown>) => c.request({ method, params } as never, z.looseObject({}) as never) as Promise<Task>;
  return { c, raw };
}

const call = (raw: (m: string, p: Record<string, unknown>) => Promise<Task>) => raw('tools/call', { name: 'bridle_run', arguments: { prompt: 'go' } });

async function until(raw: (m: string, p: Record<string, unknown>) => Promise<Task>, taskId: string, status: string): Promise<Task> {
  for (let i = 0; i < 500; i++) {
    const t = await raw('tasks/get', { taskId });
    if (t.status === status) return t;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`task ${taskId} never reached ${status}`);
}

describe('bridle_run as a task', () => {
  it('answers at once with the task; tasks/get inlines the in-place result once completed, and still does on a later poll', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { c, raw } = await connected(options(async (h) => (h.progress?.('step t1.s1'), await gate, done('the answer'))));
    const created = await call(raw);
    expect(CreateTaskResultV2Schema.safeParse({ ...created, resultType: 'task' }).success).toBe(true);
    expect(created).toMatchObject({ status: 'working', createdAt: '2026-12-02T00:00:00.000Z', ttlMs: 3_600_000, pollIntervalMs: 1000 });
    expect(created).not.toHaveProperty('result');
    const working = await until(raw, created.taskId, 'working');
    expect(working).not.toHaveProperty('result');
    release();
    const completed = await until(raw, created.taskId, 'completed');
    expect(GetTaskResultV2Schema.safeParse({ ...completed, resultType: 'complete' }).success).toBe(true);
    expect(completed.result).toMatchObject({ structuredContent: { sessionId: 's1', log: '/l/s1.jsonl', reason: 'completed', answer: 'the answer' } });
    expect(await raw('tasks/get', { taskId: created.taskId })).toMatchObject({ status: 'completed', result: completed.result });
    await c.close();
  });

  it('an approval is input_required with the approval form; an accepted approve through tasks/update allows it once, logged as the caller', async () => {
    const seen: ApprovalAnswer[] = [];
    const { c, raw } = await connected(options(askingRun(seen)));
    const { taskId } = await call(raw);
    const waiting = await until(raw, taskId, 'input_required');
    expect(GetTaskResultV2Schema.safeParse({ ...waiting, resultType: 'complete' }).success).toBe(true);
    expect(waiting.inputRequests).toMatchObject({ approval: { method: 'elicitation/create', params: { mode: 'form', requestedSchema: { required: ['decision'] } } } });
    expect(await raw('tasks/update', { taskId, inputResponses: { approval: { action: 'accept', content: { decision: 'approve', reason: 'fine' } } } })).toEqual({});
    const completed = await until(raw, taskId, 'completed');
    expect(seen).toEqual([{ outcome: 'allowed-once', by: 'mcp:tester: fine' }]);
    expect(completed.result).toMatchObject({ structuredContent: { answer: 'allowed-once' } });
    // Answered once: the same answer again is refused.
    await expect(raw('tasks/update', { taskId, inputResponses: { approval: { action: 'accept', content: { decision: 'approve' } } } })).rejects.toMatchObject({ code: -32602 });
    await c.close();
  });

  it('a deny, a decline and an odd answer reject the call', async () => {
    for (const [response, by] of [
      [{ action: 'accept', content: { decision: 'deny', reason: 'no' } }, 'mcp:tester (denied): no'],
      [{ action: 'decline' }, 'mcp:tester (declined the question)'],
      [{ action: 'accept', content: { decision: 'APPROVE' } }, 'mcp:tester (denied)'],
    ] as const) {
      const seen: ApprovalAnswer[] = [];
      const { c, raw } = await connected(options(askingRun(seen)));
      const { taskId } = await call(raw);
      await until(raw, taskId, 'input_required');
      await raw('tasks/update', { taskId, inputResponses: { approval: response } });
      await until(raw, taskId, 'completed');
      expect(seen).toEqual([{ outcome: 'rejected', by }]);
      await c.close();
    }
  });

  it('tasks/cancel mid-task cancels the run (by the mcp client) and the task settles cancelled; a cancel while it waits for input does too', async () => {
    for (const ask of [false, true]) {
      const reasons: unknown[] = [];
      const { c, raw } = await connected(
        options(async (h) => {
          if (ask) await h.answerer!({ callId: 'c1', name: 'bash', arguments: '{}', reason: 'runs', presented: 'bash', always: { tool: 'bash', pattern: '.*' }, signal: h.signal });
          else await new Promise<void>((r) => h.signal.addEventListener('abort', () => r(), { once: true }));
          reasons.push(h.signal.reason);
          return { ...done(''), reason: 'aborted' };
        }),
      );
      const { taskId } = await call(raw);
      await until(raw, taskId, ask ? 'input_required' : 'working');
      expect(await raw('tasks/cancel', { taskId })).toEqual({});
      const cancelled = await until(raw, taskId, 'cancelled');
      expect(cancelled).not.toHaveProperty('result');
      expect(reasons).toHaveLength(1);
      expect(reasons[0]).toBeInstanceOf(RoundCancel);
      expect((reasons[0] as Error).message).toBe('mcp client');
      // Idempotent on an ended task.
      expect(await raw('tasks/cancel', { taskId })).toEqual({});
      await c.close();
    }
  });

  it('a client that did not declare the extension gets the in-place call, and -32021 from the task methods', async () => {
    const { c, raw } = await connected(options(async () => done('in place')), false);
    const r = await call(raw);
    expect(r).not.toHaveProperty('taskId');
    expect(r).toMatchObject({ structuredContent: { answer: 'in place' } });
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) await expect(raw(method, { taskId: 'x', inputResponses: {} })).rejects.toMatchObject({ code: -32021 });
    await c.close();
  });

  it('an unknown task is -32602', async () => {
    const { c, raw } = await connected(options(async () => done('x')));
    await expect(raw('tasks/get', { taskId: 'nope' })).rejects.toMatchObject({ code: -32602 });
    await c.close();
  });
});
