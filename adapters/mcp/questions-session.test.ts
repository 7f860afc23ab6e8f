/**
 * A server's input requests and progress in whole sessions (ADR 0065),
 * against the asking server as a real process (`npm run build` first): the
 * question goes to the session's answerer and is logged, decided once; under
 * `never` it is declined without asking; progress reaches the feed and not
 * the log; a session's trace context reaches the server. The log verifies
 * and replays through the machines.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { replayMachines } from '../../cli/replay-machines.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import { childTraceparent } from '../../log/trace.js';
import { verifyLog } from '../../log/verify.js';
import type { AnswerRequest } from '../../ports/approval.js';
import type { PatchEntry } from '../../plugins/rows.js';
import type { SessionFeedEvent } from '../../runtime/wiring/feed.js';
import { createHarness, type Harness } from '../../test/helpers/harness.js';
import { FIXTURE, requireFixture } from '../../test/helpers/mcp-fixture.js';
import type { ResponseFunction } from '../model/scripted.js';

const ASKING = FIXTURE.replace(/mcp-fixture-server\.js$/, 'mcp-asking-server.js');
const TRACE = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

let h: Harness | undefined;
beforeAll(() => void requireFixture());
afterEach(async () => {
  await h?.session.close();
  h?.cleanup();
  h = undefined;
});

const row = (trusted = false): PatchEntry => ({ insert: true, id: 'mcp:ask', use: 'mcp', config: { command: process.execPath, args: [ASKING], trusted } });
const of = <K extends Entry['kind']>(h: Harness, kind: K) => h.entries().filter((e): e is EntryOf<K> => e.kind === kind);
const calls =
  (...steps: { name: string; arguments?: Record<string, unknown> }[]): ResponseFunction =>
  (_r, i) =>
    i < steps.length ? { toolCalls: [{ arguments: {}, ...steps[i]! }] } : { text: 'done' };

describe('a server that asks during a call, in a session', () => {
  it('asks the answerer (a question of its own class), logs question and answer, and the server acts on the values', async () => {
    const asked: AnswerRequest[] = [];
    const answerer = async (req: AnswerRequest) => {
      asked.push(req);
      return req.name === 'question' ? { outcome: 'allowed-once' as const, by: 'terminal', values: { confirm: 'yes', note: 'friday' } } : { outcome: 'allowed-once' as const, by: 'terminal' };
    };
    h = createHarness(calls({ name: 'mcp__ask__deploy', arguments: { env: 'prod' } }), { patch: [row()], approval: 'ask', answerer });
    expect((await h.session.run('deploy')).reason).toBe('completed');
    expect(asked.map((a) => [a.name, a.callId])).toEqual([
      ['mcp__ask__deploy', 't1.s1.c1'],
      ['question', 't1.s1.c1.q1'],
    ]);
    expect(of(h, 'tool/result')[0]).toMatchObject({ status: 'ok', content: 'deployed to prod (friday)' });
    const kinds = h.entries().map((e) => e.kind);
    expect(kinds.slice(kinds.indexOf('tool/dispatch'), kinds.indexOf('tool/result') + 1)).toEqual(['tool/dispatch', 'question/asked', 'question/decided', 'tool/result']);
    expect(of(h, 'question/decided')[0]).toMatchObject({ question: 't1.s1.c1.q1', outcome: 'accepted', by: 'terminal', values: { confirm: true, note: 'friday' } });
    expect(verifyLog(h.entries()).violations).toEqual([]);
    expect(await replayMachines(h.entries())).toEqual({ identical: true });
  });

  it('under never, a read-only call of a trusted server runs and its question is declined without asking', async () => {
    let asked = 0;
    h = createHarness(calls({ name: 'mcp__ask__peek' }), { patch: [row(true)], approval: 'never', answerer: async () => (asked++, { outcome: 'allowed-once', by: 'terminal' }) });
    await h.session.run('peek');
    expect(asked).toBe(0);
    expect(of(h, 'tool/result')[0]).toMatchObject({ status: 'ok', content: 'not shown: decline' });
    expect(of(h, 'question/decided')[0]).toMatchObject({ outcome: 'declined', by: 'approval policy never' });
    expect(verifyLog(h.entries()).violations).toEqual([]);
  });

  it('a form it cannot show is declined with the reason, nobody asked', async () => {
    const asked: string[] = [];
    h = createHarness(calls({ name: 'mcp__ask__pick' }), { patch: [row()], approval: 'ask', answerer: async (r) => (asked.push(r.name), { outcome: 'allowed-once', by: 'terminal' }) });
    await h.session.run('pick');
    expect(asked).toEqual(['mcp__ask__pick']);
    expect(of(h, 'question/asked')[0]).toMatchObject({ unshowable: 'the field fish is a multiple choice' });
    expect(of(h, 'question/decided')[0]).toMatchObject({ outcome: 'declined', by: 'unshowable form', reason: 'bridle cannot show this form: the field fish is a multiple choice' });
    expect(of(h, 'tool/result')[0]).toMatchObject({ content: 'picked: decline' });
  });

  it('progress reaches the feed, one event per report, nothing of it the log; a session\'s trace context reaches the server (TRACEPARENT, and each call\'s span in _meta.traceparent)', async () => {
    const progress: SessionFeedEvent[] = [];
    const subscribe = (e: SessionFeedEvent) => void (e.type === 'tool.progress' && progress.push(e));
    h = createHarness(calls({ name: 'mcp__ask__slow' }, { name: 'mcp__ask__trace' }), { patch: [row()], approval: 'auto', traceparent: TRACE, subscribe });
    await h.session.run('slow, then trace');
    expect(progress).toEqual([1, 2, 3].map((i) => ({ type: 'tool.progress', callId: 't1.s1.c1', name: 'mcp__ask__slow', progress: i, total: 3, message: `step ${i}` })));
    expect(JSON.stringify(h.entries())).not.toMatch(/step 2/);
    const seen = JSON.parse(of(h, 'tool/result')[1]!.content) as { env: string; meta: string };
    expect(seen.env).toBe(TRACE);
    expect(seen.meta).toBe(childTraceparent(h.entries(), 't1.s2.c1'));
    expect(seen.meta).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-/);
  });
});
