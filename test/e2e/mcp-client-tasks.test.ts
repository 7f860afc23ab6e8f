/**
 * bridle's MCP client on the tasks extension (ADR 0084), against the built
 * `bridle mcp` over stdio (`npm run build` first), whose `bridle_run` is a
 * task for a client that declares the extension (ADR 0083). Through
 * `connectMcp`, as a session's MCP row calls it: the call is answered with a
 * task, polled to `completed`, and its inlined result read as any call's;
 * the inner session's approval arrives as the task's `input_required` and is
 * asked of the call's `ask`, answered with `tasks/update`; an abort while it
 * waits sends `tasks/cancel` and the inner turn ends `aborted` by
 * `mcp client`; the same approved task over `bridle mcp --http`. That the
 * extension is in use is read from `tasksExtension` and from the progress:
 * one report per `tasks/get`, counted from 1.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { McpConfig } from '../../adapters/mcp/config.js';
import { connectMcp, type McpConnection } from '../../adapters/mcp/connection.js';
import type { Entry } from '../../log/entries.js';
import { verifyLog } from '../../log/verify.js';
import type { ToolQuestion } from '../../ports/tools.js';
import { startCliServer } from '../helpers/cli-server.js';
import { expectCancelledByClient, writingMcpWorld } from '../helpers/writing-mcp-world.js';

async function inner(http = false): Promise<{ conn: McpConnection; file: string; logOf: () => Entry[]; stop?: () => Promise<unknown> }> {
  const w = writingMcpWorld('bridle-mcp-client-tasks-');
  const at = { id: 'mcp:inner', cwd: w.ws, signal: new AbortController().signal };
  if (http) {
    const srv = await startCliServer('mcp', ['--http', ...w.args], { BRIDLE_HOME: w.home });
    const conn = await connectMcp(McpConfig.parse({ url: srv.url, headers: { authorization: `Bearer ${srv.token}` } }), at);
    return { conn, file: w.file, logOf: w.log, stop: () => srv.stop() };
  }
  const conn = await connectMcp(McpConfig.parse(w.stdio), at);
  return { conn, file: w.file, logOf: w.log };
}

const decided = (entries: Entry[]) => entries.filter((e) => e.kind === 'approval/decided').map((e) => [(e as { outcome: string }).outcome, (e as { by: string }).by]);

describe('bridle_run of bridle mcp, called by bridle as an extension task', () => {
  it('approve: asked of the call, answered with tasks/update; the task completes and its result is the call\'s', async () => {
    const s = await inner();
    try {
      expect(s.conn.protocolVersion).toBe('2026-07-28');
      expect(s.conn.tasksExtension).toBe(true);
      const asked: ToolQuestion[] = [];
      const progress: { progress: number; message?: string }[] = [];
      const out = await s.conn.call('bridle_run', { prompt: 'Write out.txt.' }, new AbortController().signal, {
        ask: async (q) => (asked.push(q), { action: 'accepted', values: { decision: 'approve', reason: 'looks right' } }),
        progress: (p) => void progress.push(p),
      });
      expect(out).toMatchObject({ status: 'ok', content: expect.stringContaining('Done.') });
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({ from: 'mcp:inner', message: expect.stringContaining('write out.txt') });
      // Polled: each tasks/get is one progress report, counted.
      expect(progress.length).toBeGreaterThanOrEqual(2);
      expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1));
      expect(readFileSync(s.file, 'utf8')).toBe('hello\n');
      const entries = s.logOf();
      expect(verifyLog(entries).violations).toEqual([]);
      expect(decided(entries)).toEqual([['allowed-once', 'mcp:bridle: looks right']]);
    } finally {
      await s.conn.close();
    }
  }, 90_000);

  it('deny: nothing is written, the task completes with the turn', async () => {
    const s = await inner();
    try {
      const out = await s.conn.call('bridle_run', { prompt: 'Write out.txt.' }, new AbortController().signal, { ask: async () => ({ action: 'accepted', values: { decision: 'deny' } }) });
      expect(out.status).toBe('ok');
      expect(existsSync(s.file)).toBe(false);
      expect(decided(s.logOf())[0]?.[0]).not.toBe('allowed-once');
    } finally {
      await s.conn.close();
    }
  }, 90_000);

  it('an abort while the approval waits sends tasks/cancel: the inner turn ends aborted by the mcp client, nothing is written', async () => {
    const s = await inner();
    try {
      const abort = new AbortController();
      const call = s.conn.call('bridle_run', { prompt: 'Write out.txt.' }, abort.signal, {
        ask: (_q, signal) =>
          new Promise((_, reject) => {
            signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
            abort.abort(new Error('stopped by the test'));
          }),
      });
      await expect(call).rejects.toThrow('stopped by the test');
      for (const until = Date.now() + 30_000; Date.now() < until && !s.logOf().some((e) => e.kind === 'turn/end'); ) await new Promise((r) => setTimeout(r, 100));
      const entries = s.logOf();
      expectCancelledByClient(entries, s.file);
    } finally {
      await s.conn.close();
    }
  }, 90_000);

  it('over streamable HTTP (bridle mcp --http, its token): the same task, approved, completes', async () => {
    const s = await inner(true);
    try {
      expect(s.conn.protocolVersion).toBe('2026-07-28');
      expect(s.conn.tasksExtension).toBe(true);
      let asked = 0;
      const progress: number[] = [];
      const out = await s.conn.call('bridle_run', { prompt: 'Write out.txt.' }, new AbortController().signal, {
        ask: async () => (asked++, { action: 'accepted', values: { decision: 'approve' } }),
        progress: (p) => void progress.push(p.progress),
      });
      expect(progress.length).toBeGreaterThanOrEqual(2);
      expect(progress).toEqual(progress.map((_, i) => i + 1));
      expect(out).toMatchObject({ status: 'ok', content: expect.stringContaining('Done.') });
      expect(asked).toBe(1);
      expect(readFileSync(s.file, 'utf8')).toBe('hello\n');
      expect(decided(s.logOf())).toEqual([['allowed-once', 'mcp:bridle']]);
    } finally {
      await s.conn.close();
      await s.stop?.();
    }
  }, 90_000);
});
