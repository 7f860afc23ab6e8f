/**
 * The tasks extension's client parts (ADR 0084), without a server: what bridle sends is checked with
 * `@modelcontextprotocol/ext-tasks`' v2 schemas (another implementation's reading of SEP-2663), and the
 * server's side is scripted in ext-tasks' shapes. The tap declares the extension in a 2026-07-28 envelope
 * only once enabled, and lifts a task answer to `tools/call` (only to it) into a result the SDK accepts;
 * `followTask` polls at the server's interval within bounds, asks an input request and answers it with
 * `tasks/update`, reads the inlined result, and sends `tasks/cancel` on abort.
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { CancelTaskRequestV2Schema, ClientTaskCapabilityEnvelopeV2Schema, CreateTaskResultV2Schema, GetTaskRequestV2Schema, GetTaskResultV2Schema, UpdateTaskRequestV2Schema } from '@modelcontextprotocol/ext-tasks/core/v2';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { followTask, tapForTasks, taskOf, TaskProtocolError } from './tasks-extension.js';
import { declaresTasksExtension, TASKS_EXTENSION } from '../../ports/mcp-tasks.js';
import type { TaskClient } from './tasks.js';

const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const at = '2026-12-02T14:00:00.000Z';
const task = (status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled', more: Record<string, unknown> = {}) => ({ taskId: 't1', status, createdAt: at, lastUpdatedAt: at, ttlMs: 60_000, pollIntervalMs: 1, ...more });

function fakeTransport() {
  const sent: JSONRPCMessage[] = [];
  const t: Transport = { start: async () => undefined, close: async () => undefined, send: async (m) => void sent.push(m) };
  return { t, sent };
}

const call = (id: number, method = 'tools/call') => ({ jsonrpc: '2.0', id, method, params: { name: 'bridle_run', arguments: {}, _meta: { [CAPS]: { elicitation: { form: {} } } } } }) as JSONRPCMessage;

describe('offersTasksExtension', () => {
  it('reads the extension under capabilities.extensions, and nothing else', () => {
    expect(declaresTasksExtension({ extensions: { [TASKS_EXTENSION]: {} } })).toBe(true);
    expect(declaresTasksExtension({ tasks: { requests: { tools: { call: {} } } } })).toBe(false);
    expect(declaresTasksExtension({ extensions: [] })).toBe(false);
    expect(declaresTasksExtension(undefined)).toBe(false);
  });
});

describe('tapForTasks', () => {
  it('declares the extension in the envelope once enabled, and lifts a task answer to tools/call for taskOf', async () => {
    const { t, sent } = fakeTransport();
    const tap = tapForTasks(t);
    const got: JSONRPCMessage[] = [];
    tap.transport.onmessage = (m) => void got.push(m);
    await tap.transport.send(call(1));
    expect((sent[0] as { params: { _meta: Record<string, unknown> } }).params._meta[CAPS]).toEqual({ elicitation: { form: {} } });
    tap.enable();
    await tap.transport.send(call(2));
    await tap.transport.send(call(3, 'tasks/get'));
    for (const m of sent.slice(1)) expect(ClientTaskCapabilityEnvelopeV2Schema.safeParse((m as { params: { _meta: Record<string, unknown> } }).params._meta[CAPS]).error).toBeUndefined();
    const created = { resultType: 'task', ...task('working') };
    expect(CreateTaskResultV2Schema.safeParse(created).error).toBeUndefined();
    t.onmessage!({ jsonrpc: '2.0', id: 2, result: created } as JSONRPCMessage);
    // An answer to another request is not touched, even one that looks like a task.
    t.onmessage!({ jsonrpc: '2.0', id: 3, result: created } as JSONRPCMessage);
    const lifted = (got[0] as { result: Record<string, unknown> }).result;
    expect(lifted).toMatchObject({ resultType: 'complete', content: [], isError: true });
    expect(taskOf(lifted)).toMatchObject({ taskId: 't1', status: 'working' });
    expect((got[1] as { result: unknown }).result).toEqual(created);
    expect(taskOf({ content: [] })).toBeUndefined();
    expect(() => taskOf({ _meta: { 'dev.bridle/task': { status: 'odd' } } })).toThrow(TaskProtocolError);
  });

  it('forgets a tools/call cancelled before its answer: by its notifications/cancelled, or by its request signal', async () => {
    const { t } = fakeTransport();
    const tap = tapForTasks(t);
    tap.enable();
    await tap.transport.send(call(1));
    await tap.transport.send(call(2));
    expect(tap.pending).toBe(2);
    await tap.transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'gave up' } } as JSONRPCMessage);
    expect(tap.pending).toBe(1);
    t.onmessage = () => undefined;
    tap.transport.onmessage = () => undefined;
    t.onmessage!({ jsonrpc: '2.0', id: 2, result: { content: [] } } as JSONRPCMessage);
    expect(tap.pending).toBe(0);
    const stop = new AbortController();
    await tap.transport.send(call(3), { requestSignal: stop.signal });
    expect(tap.pending).toBe(1);
    stop.abort();
    expect(tap.pending).toBe(0);
  });

  it('passes a 2025 request (no envelope) unchanged, enabled or not', async () => {
    const { t, sent } = fakeTransport();
    const tap = tapForTasks(t);
    tap.enable();
    const m = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } } as JSONRPCMessage;
    await tap.transport.send(m);
    expect(sent[0]).toBe(m);
  });
});

/** A scripted server: answers each request in turn, and keeps what bridle sent, framed as JSON-RPC. */
function scripted(answers: ((params: Record<string, unknown>) => unknown)[]) {
  const sent: unknown[] = [];
  const client: TaskClient = {
    async request<S extends z.ZodType>(r: { method: string; params?: Record<string, unknown> }, schema: S, options?: { signal?: AbortSignal }) {
      sent.push({ jsonrpc: '2.0', id: sent.length + 1, ...r });
      if (r.method !== 'tasks/cancel' && options?.signal?.aborted) throw options.signal.reason;
      const next = answers.shift();
      if (!next) throw new Error(`no answer scripted for ${r.method}`);
      return schema.parse(next(r.params ?? {})) as z.infer<S>;
    },
  };
  return { client, sent };
}

const form = { method: 'elicitation/create', params: { mode: 'form', message: 'bridle asks to run: write out.txt', requestedSchema: { type: 'object', properties: { decision: { type: 'string', enum: ['approve', 'deny'] } }, required: ['decision'] } } };

describe('followTask', () => {
  it('polls, asks the input request and answers it with tasks/update, and returns the inlined result', async () => {
    const result = { content: [{ type: 'text', text: 'Done.' }], isError: false };
    const replies = [task('working', { statusMessage: 'step 1' }), task('input_required', { inputRequests: { approval: form } }), task('working'), task('completed', { result })].map((r) => ({ resultType: 'complete', ...r }));
    for (const r of replies) expect(GetTaskResultV2Schema.safeParse(r).error).toBeUndefined();
    const { client, sent } = scripted([() => replies[0], () => replies[1], () => ({ resultType: 'complete' }), () => replies[2], () => replies[3]]);
    const progress: { progress: number; message?: string }[] = [];
    const asked: string[] = [];
    const out = await followTask(client, task('working'), {
      signal: new AbortController().signal,
      timeout: 10_000,
      from: 'mcp:inner',
      progress: (p) => void progress.push(p),
      ask: async (q) => (asked.push(`${q.from}: ${q.message}`), { action: 'accepted', values: { decision: 'approve' } }),
    });
    expect(out).toEqual(result);
    expect(asked).toEqual(['mcp:inner: bridle asks to run: write out.txt']);
    expect(progress).toEqual([{ progress: 1, message: 'step 1' }, { progress: 2 }, { progress: 3 }, { progress: 4 }]);
    expect(sent.map((m) => (m as { method: string }).method)).toEqual(['tasks/get', 'tasks/get', 'tasks/update', 'tasks/get', 'tasks/get']);
    for (const m of sent) {
      const schema = (m as { method: string }).method === 'tasks/update' ? UpdateTaskRequestV2Schema : GetTaskRequestV2Schema;
      expect(schema.safeParse(m).error).toBeUndefined();
    }
    expect((sent[2] as { params: unknown }).params).toEqual({ taskId: 't1', inputResponses: { approval: { action: 'accept', content: { decision: 'approve' } } } });
  });

  it('declines an input request when nobody can be asked', async () => {
    const { client, sent } = scripted([() => ({ resultType: 'complete' }), () => ({ resultType: 'complete', ...task('completed', { result: { content: [], isError: true } }) })]);
    const out = await followTask(client, task('input_required', { inputRequests: { approval: form } }), { signal: new AbortController().signal, timeout: 10_000, from: 'mcp:inner' });
    expect(out.isError).toBe(true);
    expect((sent[0] as { params: unknown }).params).toEqual({ taskId: 't1', inputResponses: { approval: { action: 'decline' } } });
  });

  it('a failed task, and one the server cancelled, are TaskProtocolErrors saying so', async () => {
    const failed = scripted([() => ({ resultType: 'complete', ...task('failed', { error: { code: -32603, message: 'it broke' } }) })]);
    await expect(followTask(failed.client, task('working'), { signal: new AbortController().signal, timeout: 1000, from: 'mcp:x' })).rejects.toThrow(/failed: it broke/);
    const cancelled = scripted([() => ({ resultType: 'complete', ...task('cancelled') })]);
    await expect(followTask(cancelled.client, task('working'), { signal: new AbortController().signal, timeout: 1000, from: 'mcp:x' })).rejects.toBeInstanceOf(TaskProtocolError);
  });

  it('on abort sends tasks/cancel for the task and rejects with the abort', async () => {
    const abort = new AbortController();
    const { client, sent } = scripted([
      () => {
        abort.abort(new Error('deadline'));
        return { resultType: 'complete', ...task('working', { pollIntervalMs: 60_000 }) };
      },
      () => ({ resultType: 'complete' }),
    ]);
    await expect(followTask(client, task('working'), { signal: abort.signal, timeout: 1000, from: 'mcp:x' })).rejects.toThrow('deadline');
    expect(sent.map((m) => (m as { method: string }).method)).toEqual(['tasks/get', 'tasks/cancel']);
    expect(CancelTaskRequestV2Schema.safeParse(sent[1]).error).toBeUndefined();
  });
});
