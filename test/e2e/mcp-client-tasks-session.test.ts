/**
 * A bridle session whose MCP row mounts the built `bridle mcp` (stdio, `npm
 * run build` first) and calls its `bridle_run`, which the inner server runs
 * as a task of the extension (ADRs 0083, 0084): the outer session's call is
 * polled to completion, its result the inner turn's answer; the inner
 * session's approval is the task's input request, asked of the outer
 * session's answerer as a question and logged there (ADR 0065); the task's
 * status messages reach the outer feed and not its log; a cancel of the
 * outer session mid-task sends `tasks/cancel`, and the inner turn ends
 * aborted by the MCP client. Both logs verify.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Entry, EntryOf } from '../../log/entries.js';
import { verifyLog } from '../../log/verify.js';
import type { AnswerRequest } from '../../ports/approval.js';
import type { PatchEntry } from '../../plugins/rows.js';
import type { SessionFeedEvent } from '../../runtime/wiring/feed.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { expectCancelledByClient, writingMcpWorld } from '../helpers/writing-mcp-world.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.session.close();
  h?.cleanup();
  h = undefined;
});

function innerServer() {
  const w = writingMcpWorld('bridle-mcp-tasks-session-');
  const row: PatchEntry = { insert: true, id: 'mcp:inner', use: 'mcp', config: w.stdio };
  return { row, file: w.file, innerLog: w.log };
}

const of = <K extends Entry['kind']>(entries: readonly Entry[], kind: K) => entries.filter((e): e is EntryOf<K> => e.kind === kind);
const callInner = () => (_r: unknown, i: number) => (i === 0 ? { toolCalls: [{ name: 'mcp__inner__bridle_run', arguments: { prompt: 'Write out.txt.' } }] } : { text: 'outer done' });

describe('a session calling bridle_run of bridle mcp as an extension task', () => {
  it('completes: the inner approval is the outer answerer\'s question, logged; the result is the inner answer; status messages reach the feed only', async () => {
    const s = innerServer();
    const asked: AnswerRequest[] = [];
    const progress: SessionFeedEvent[] = [];
    const answerer = async (req: AnswerRequest) => {
      asked.push(req);
      return req.name === 'question' ? { outcome: 'allowed-once' as const, by: 'scripted', values: { decision: 'approve', reason: 'fine' } } : { outcome: 'allowed-once' as const, by: 'scripted' };
    };
    h = createHarness(callInner(), { patch: [s.row], approval: 'ask', answerer, subscribe: (e) => void (e.type === 'tool.progress' && progress.push(e)) });
    expect((await h.session.run('delegate')).reason).toBe('completed');
    expect(asked.map((a) => a.name)).toEqual(['mcp__inner__bridle_run', 'question']);
    expect(of(h.entries(), 'tool/result')[0]).toMatchObject({ status: 'ok', content: expect.stringContaining('Done.') });
    expect(of(h.entries(), 'question/decided')[0]).toMatchObject({ outcome: 'accepted', by: 'scripted', values: { decision: 'approve' } });
    expect(readFileSync(s.file, 'utf8')).toBe('hello\n');
    // Each tasks/get is a progress report, counted; none of it is in the log.
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.map((p) => (p as { progress: number }).progress)).toEqual(progress.map((_, i) => i + 1));
    const messages = progress.map((p) => (p as { message?: string }).message).filter((m): m is string => !!m);
    for (const m of messages) expect(JSON.stringify(h.entries())).not.toContain(m);
    expect(verifyLog(h.entries()).violations).toEqual([]);
    const inner = s.innerLog();
    expect(verifyLog(inner).violations).toEqual([]);
    expect(of(inner, 'approval/decided').map((d) => [d.outcome, d.by])).toEqual([['allowed-once', 'mcp:bridle: fine']]);
  }, 90_000);

  it('a cancel of the outer session while the inner approval waits: tasks/cancel, the inner turn ends aborted by the mcp client', async () => {
    const s = innerServer();
    let cancelled: Promise<unknown> | undefined;
    // The question is never answered: the session is cancelled while it waits.
    const answerer = async (req: AnswerRequest) => {
      if (req.name !== 'question') return { outcome: 'allowed-once' as const, by: 'scripted' };
      cancelled = h!.session.cancel('user');
      return new Promise<never>(() => undefined);
    };
    h = createHarness(callInner(), { patch: [s.row], approval: 'ask', answerer });
    expect((await h.session.run('delegate')).reason).toBe('aborted');
    await cancelled;
    for (const until = Date.now() + 30_000; Date.now() < until && !s.innerLog().some((e) => e.kind === 'turn/end'); ) await new Promise((r) => setTimeout(r, 100));
    const inner = s.innerLog();
    expectCancelledByClient(inner, s.file);
    expect(verifyLog(h.entries()).violations).toEqual([]);
  }, 90_000);
});
