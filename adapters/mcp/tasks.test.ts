/**
 * MCP tasks against a server nobody on this project wrote: server-everything's `simulate-research-query`
 * (`execution.taskSupport: 'required'`, four stages of a second each) is called as a task through bridle's
 * connection, polled with `tasks/get` (its status messages as progress) and its result fetched with
 * `tasks/result`; an aborted call sends `tasks/cancel`, and the server's task ends `cancelled`.
 */
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { Client } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { McpConfig } from './config.js';
import { connectMcp } from './connection.js';
import { CappedStdioTransport } from './stdio-transport.js';
import { callAsTask, isTaskTool, type TaskClient } from './tasks.js';

const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
const server = { command: process.execPath, args: [EVERYTHING, 'stdio'] };

describe('isTaskTool', () => {
  it('is a task when the tool requires or allows one and the server offers tasks for tools/call (SEP-1686\'s capability slot)', () => {
    const offered = { tasks: { requests: { tools: { call: {} } } } };
    const tool = (taskSupport?: 'required' | 'optional' | 'forbidden') => ({ name: 't', inputSchema: {}, ...(taskSupport ? { execution: { taskSupport } } : {}) });
    expect(isTaskTool(tool('required'), offered)).toBe(true);
    expect(isTaskTool(tool('optional'), offered)).toBe(true);
    expect(isTaskTool(tool('required'), undefined)).toBe(false);
    expect(isTaskTool(tool('required'), { extensions: { 'io.modelcontextprotocol/tasks': {} } })).toBe(false);
    expect(isTaskTool(tool('optional'), { tasks: {} })).toBe(false);
    expect(isTaskTool(tool('forbidden'), offered)).toBe(false);
    expect(isTaskTool(tool(), offered)).toBe(false);
    expect(isTaskTool(undefined, offered)).toBe(false);
  });
});

describe('a task tool of server-everything', () => {
  it('is called as a task through the connection: polled to completion, its status messages as progress, its result fetched', { timeout: 30_000 }, async () => {
    const conn = await connectMcp(McpConfig.parse(server), { id: 'mcp:everything', cwd: tmpdir(), signal: new AbortController().signal });
    try {
      expect(conn.tools.find((t) => t.name === 'simulate-research-query')?.execution).toEqual({ taskSupport: 'required' });
      const progress: { progress: number; message?: string }[] = [];
      const out = await conn.call('simulate-research-query', { topic: 'tide pools' }, new AbortController().signal, { progress: (p) => void progress.push(p) });
      expect(out).toMatchObject({ status: 'ok', content: expect.stringContaining('# Research Report: tide pools') });
      expect(progress.length).toBeGreaterThanOrEqual(3);
      expect(progress.map((p) => p.message)).toContain('Generating report...');
      expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1));
    } finally {
      await conn.close();
    }
  });

  it('sends tasks/cancel when the call is aborted: the server\'s task ends cancelled', { timeout: 30_000 }, async () => {
    const client = new Client({ name: 'bridle-test', version: '0' });
    await client.connect(new CappedStdioTransport({ command: server.command, args: server.args, env: {}, cwd: tmpdir() }, () => undefined));
    try {
      const abort = new AbortController();
      const seen: string[] = [];
      const tasks = client as unknown as TaskClient;
      const call = callAsTask(tasks, { name: 'simulate-research-query', arguments: { topic: 'x' } }, {
        signal: abort.signal,
        timeout: 20_000,
        progress: (p) => {
          seen.push(p.message ?? '');
          abort.abort(new Error('stop'));
        },
      });
      await expect(call).rejects.toBeDefined();
      expect(seen).toHaveLength(1);
      const listed = await tasks.request({ method: 'tasks/list', params: {} }, z.looseObject({ tasks: z.array(z.looseObject({ taskId: z.string(), status: z.string() })) }));
      expect(listed.tasks.map((t) => t.status)).toEqual(['cancelled']);
    } finally {
      await client.close();
    }
  });
});
