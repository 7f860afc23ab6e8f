/**
 * `bridle_run` as a task (the tasks extension, ADR 0083) against the built
 * `bridle mcp` over stdio, driven on the v2 SDK's stdio transport with
 * requests framed as 2026-07-28 (the SDK's `Client` refuses a task result),
 * the extension and form elicitation declared (`npm run build` first); the
 * wire is checked against `@modelcontextprotocol/ext-tasks`' schemas.
 * A scripted session that writes a file: the call answers with the task, the
 * approval is the task's `input_required`, answered with `tasks/update`;
 * an approve writes the file and the completed task inlines the result (the
 * final answer and the log's path), also on a later poll; a deny writes
 * nothing; a `tasks/cancel` while the approval waits cancels the turn by
 * `mcp client`, the task settles `cancelled`, and the log verifies.
 */
import { existsSync, readFileSync } from 'node:fs';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import { CreateTaskResultV2Schema, GetTaskResultV2Schema } from '@modelcontextprotocol/ext-tasks/core/v2';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { expectCancelledByClient, writingMcpWorld } from '../helpers/writing-mcp-world.js';

type Task = { taskId: string; status: string; result?: { structuredContent?: { log: string; reason: string; answer: string } }; inputRequests?: Record<string, unknown> };

async function session() {
  const w = writingMcpWorld('bridle-mcp-tasks-');
  // Raw JSON-RPC on the SDK's stdio transport: the v2 SDK's Client refuses a tools/call answered with a task
  // ("Unsupported result type 'task'"), so the requests are framed here as a 2026-07-28 client frames them.
  const t = new StdioClientTransport({ ...w.stdio, stderr: 'pipe' });
  const pending = new Map<number, (m: { result?: Task; error?: { code: number; message: string } }) => void>();
  t.onmessage = (m) => {
    const id = (m as { id?: number }).id;
    if (typeof id === 'number') pending.get(id)?.(m as never);
  };
  await t.start();
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'tasker', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } },
  };
  let n = 0;
  const raw = (method: string, params: Record<string, unknown>) =>
    new Promise<Task>((resolve, reject) => {
      const id = ++n;
      pending.set(id, (m) => (pending.delete(id), m.error ? reject(Object.assign(new Error(m.error.message), m.error)) : resolve(m.result!)));
      void t.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } });
    });
  const c = { close: () => t.close() };
  const until = async (taskId: string, status: string) => {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      const t = await raw('tasks/get', { taskId });
      if (t.status === status) return t;
    }
    throw new Error(`task ${taskId} never reached ${status}`);
  };
  return { c, raw, until, logOf: w.log, file: w.file };
}

const answer = (decision: string) => ({ approval: { action: 'accept', content: { decision } } });

describe('bridle mcp runs bridle_run as a task for a client that declared the extension', () => {
  it('approve through tasks/update: the file is written, the completed task inlines the answer and log, on every poll after', async () => {
    const s = await session();
    try {
      const created = await s.raw('tools/call', { name: 'bridle_run', arguments: { prompt: 'Write out.txt.' } });
      expect(created).toMatchObject({ resultType: 'task', status: 'working' });
      // ext-tasks' reading of SEP-2663 accepts the wire as bridle writes it.
      expect(CreateTaskResultV2Schema.safeParse(created).error).toBeUndefined();
      const waiting = await s.until(created.taskId, 'input_required');
      expect(GetTaskResultV2Schema.safeParse(waiting).error).toBeUndefined();
      expect(JSON.stringify(waiting.inputRequests)).toContain('write out.txt');
      await s.raw('tasks/update', { taskId: created.taskId, inputResponses: answer('approve') });
      const done = await s.until(created.taskId, 'completed');
      expect(GetTaskResultV2Schema.safeParse(done).error).toBeUndefined();
      expect(done.result?.structuredContent).toMatchObject({ reason: 'completed', answer: 'Done.' });
      expect(readFileSync(s.file, 'utf8')).toBe('hello\n');
      expect((await s.raw('tasks/get', { taskId: created.taskId })).result).toEqual(done.result);
      const entries = parseLog(readFileSync(done.result!.structuredContent!.log, 'utf8')).entries as Entry[];
      expect(verifyLog(entries).violations).toEqual([]);
      expect(entries.filter((e) => e.kind === 'approval/decided').map((e) => [(e as { outcome: string }).outcome, (e as { by: string }).by])).toEqual([['allowed-once', 'mcp:tasker']]);
    } finally {
      await s.c.close();
    }
  }, 90_000);

  it('deny: nothing is written, the task completes with the turn', async () => {
    const s = await session();
    try {
      const { taskId } = await s.raw('tools/call', { name: 'bridle_run', arguments: { prompt: 'Write out.txt.' } });
      await s.until(taskId, 'input_required');
      await s.raw('tasks/update', { taskId, inputResponses: answer('deny') });
      expect((await s.until(taskId, 'completed')).result?.structuredContent).toMatchObject({ reason: 'completed' });
      expect(existsSync(s.file)).toBe(false);
    } finally {
      await s.c.close();
    }
  }, 90_000);

  it('tasks/cancel while the approval waits: the turn ends aborted by the mcp client, the task is cancelled, the log verifies', async () => {
    const s = await session();
    try {
      const { taskId } = await s.raw('tools/call', { name: 'bridle_run', arguments: { prompt: 'Write out.txt.' } });
      await s.until(taskId, 'input_required');
      await s.raw('tasks/cancel', { taskId });
      await s.until(taskId, 'cancelled');
      const entries = s.logOf();
      expectCancelledByClient(entries, s.file);
    } finally {
      await s.c.close();
    }
  }, 90_000);
});
