/**
 * `bridle mcp` asks its caller for approvals (ADR 0075), driven by the v2
 * SDK's own `Client` over stdio (the built CLI, `npm run build` first). A
 * client that declares form elicitation gets each approval as an input
 * request — in-band `input_required` on 2026-07-28 (`mode: 'auto'`), a real
 * `elicitation/create` on a 2025 connection (the default `legacy` mode) —
 * and its answer decides the call: the scripted model's `write_file` runs
 * after an approve and not after a deny; both answers are logged as
 * approvals are, with who answered. A client that cannot answer runs under
 * `never`, and nothing asks it. A server killed while its question waits
 * has logged the question; continuing the session by id asks it again of
 * the next caller, and the call runs on its approve.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { writingMcpWorld } from '../helpers/writing-mcp-world.js';

type Answer = { action: 'accept'; content: Record<string, string> } | { action: 'decline' };

async function runWith(mode: 'auto' | 'legacy', answer: Answer | undefined) {
  const w = writingMcpWorld('bridle-mcp-approvals-', 'hello\nworld\n');
  const asked: { message: string; schema: unknown }[] = [];
  const c = new Client({ name: 'approver', version: '1.0.0' }, { versionNegotiation: { mode }, ...(answer ? { capabilities: { elicitation: { form: {} } } } : {}) });
  if (answer) {
    c.setRequestHandler('elicitation/create', async (req) => {
      const p = req.params as { message: string; requestedSchema?: unknown };
      asked.push({ message: p.message, schema: p.requestedSchema });
      return answer;
    });
  }
  await c.connect(new StdioClientTransport({ ...w.stdio, stderr: 'pipe' }));
  try {
    const r = await c.callTool({ name: 'bridle_run', arguments: { prompt: 'Write out.txt.' } });
    const out = r.structuredContent as { log: string; reason: string; answer: string };
    const entries: Entry[] = parseLog(readFileSync(out.log, 'utf8')).entries;
    expect(verifyLog(entries).violations).toEqual([]);
    return { r, out, entries, asked, file: w.file };
  } finally {
    await c.close();
  }
}

const decided = (entries: Entry[]) => entries.filter((e) => e.kind === 'approval/decided') as Extract<Entry, { kind: 'approval/decided' }>[];

describe('bridle mcp asks a caller that answers input requests', () => {
  for (const mode of ['auto', 'legacy'] as const) {
    it(`${mode === 'auto' ? '2026-07-28 (input_required)' : '2025 (elicitation/create)'}: approve writes the file, deny leaves none; each answer logged once, by the client`, async () => {
      const yes = await runWith(mode, { action: 'accept', content: { decision: 'approve', reason: 'looks right' } });
      expect(yes.out).toMatchObject({ reason: 'completed', answer: 'Done.' });
      expect(readFileSync(yes.file, 'utf8')).toBe('hello\nworld\n');
      expect(yes.asked).toHaveLength(1);
      expect(yes.asked[0]!.message).toContain('write out.txt:\n+ hello\n+ world');
      expect(yes.asked[0]!.schema).toMatchObject({ properties: { decision: { enum: ['approve', 'deny'] } }, required: ['decision'] });
      expect(yes.entries.find((e) => e.kind === 'session/start')).toMatchObject({ policy: expect.objectContaining({ approval: 'ask' }) });
      expect(yes.entries.filter((e) => e.kind === 'approval/asked')).toHaveLength(1);
      expect(decided(yes.entries).map((e) => [e.outcome, e.by])).toEqual([['allowed-once', 'mcp:approver: looks right']]);

      const no = await runWith(mode, { action: 'accept', content: { decision: 'deny', reason: 'not that file' } });
      expect(no.out).toMatchObject({ reason: 'completed' });
      expect(existsSync(no.file)).toBe(false);
      expect(decided(no.entries).map((e) => [e.outcome, e.by])).toEqual([['rejected', 'mcp:approver (denied): not that file']]);

      const declined = await runWith(mode, { action: 'decline' });
      expect(existsSync(declined.file)).toBe(false);
      expect(decided(declined.entries).map((e) => [e.outcome, e.by])).toEqual([['rejected', 'mcp:approver (declined the question)']]);
    }, 120_000);
  }

  it('a caller that declared no elicitation runs under never: nothing asks it, the workspace write runs', async () => {
    const r = await runWith('auto', undefined);
    expect(r.entries.find((e) => e.kind === 'session/start')).toMatchObject({ policy: expect.objectContaining({ approval: 'never' }) });
    expect(r.entries.filter((e) => e.kind === 'approval/asked')).toEqual([]);
    expect(readFileSync(r.file, 'utf8')).toBe('hello\nworld\n');
  }, 60_000);

  it('a server killed while the question waits left it in the log; continuing the session by id asks it again, and an approve runs the call', async () => {
    const w = writingMcpWorld('bridle-mcp-approvals-', 'hello\nworld\n');
    const caller = (onAsk: () => Promise<Answer>) => {
      const c = new Client({ name: 'crasher', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {} } } });
      c.setRequestHandler('elicitation/create', onAsk);
      return c;
    };
    const first = new StdioClientTransport({ ...w.stdio, stderr: 'pipe' });
    const killer = caller(async () => {
      process.kill(first.pid!, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 300));
      return { action: 'decline' };
    });
    await killer.connect(first);
    await expect(killer.callTool({ name: 'bridle_run', arguments: { prompt: 'Write out.txt.' } })).rejects.toThrow();
    const sessions = join(w.home, 'sessions');
    const log = join(sessions, readdirSync(sessions).find((f) => f.endsWith('.jsonl'))!);
    expect(parseLog(readFileSync(log, 'utf8')).entries.at(-1)).toMatchObject({ kind: 'approval/asked' });
    expect(existsSync(w.file)).toBe(false);

    const approver = caller(async () => ({ action: 'accept', content: { decision: 'approve' } }));
    await approver.connect(new StdioClientTransport({ ...w.stdio, stderr: 'pipe' }));
    try {
      const id = log.slice(sessions.length + 1, -'.jsonl'.length);
      await approver.callTool({ name: 'bridle_run', arguments: { prompt: 'Go on.', session: id } });
      const entries = parseLog(readFileSync(log, 'utf8')).entries;
      const after = entries.slice(entries.findIndex((e) => e.kind === 'session/takeover'));
      expect(decided(after)[0]).toMatchObject({ outcome: 'allowed-once', by: 'mcp:crasher' });
      expect(readFileSync(w.file, 'utf8')).toBe('hello\nworld\n');
      expect(verifyLog(entries).violations).toEqual([]);
    } finally {
      await approver.close();
    }
  }, 90_000);
});
