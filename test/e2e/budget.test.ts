/**
 * Budgets as users meet them (ADR 0047; issue 21 item 4, issue 22 item 9): `bridle run --budget` against a local
 * OpenAI-compatible server through the real SDK ends the turn BUDGET_EXHAUSTED with the figures and makes no call
 * past it, counted in tokens or in dollars at the prices table (a provider row that is not scripted); and under
 * `serve` a spent budget asks the attached clients — an approval of its own class — and a yes makes the call once.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EntryOf } from '../../log/entries.js';
import { verifyLog } from '../../log/verify.js';
import { type OpenAIServer, startOpenAIServer, streamReply } from '../helpers/openai-sse-server.js';
import { textChunks, toolCallChunks, usageChunk } from '../helpers/openai-chunks.js';
import { readSessionLog, tempWorld } from '../helpers/cli-world.js';
import { runCli } from '../helpers/cli.js';
import { serverPerTest } from '../helpers/server-per-test.js';

describe('bridle run --budget', () => {
  let srv: OpenAIServer;
  let home: string;
  let ws: string;
  beforeEach(async () => {
    srv = await startOpenAIServer();
    ({ home, ws } = tempWorld('bridle-budget-'));
  });
  afterEach(() => srv.close());

  const calls = () => srv.requests.filter((q) => q.path.endsWith('/chat/completions')).length;
  /** Each answer asks to list the directory again, spending what `usage` says. */
  const listing = (usage: { prompt_tokens: number; completion_tokens: number }, n: number) => {
    for (let i = 0; i < n; i++) srv.enqueue(streamReply([...toolCallChunks([{ id: `c${i}`, name: 'list_dir', arguments: '{}' }]), usageChunk(usage)]));
    srv.enqueue(streamReply([...textChunks('done'), usageChunk(usage)]));
  };

  it('a budget ends a run: exit 1, stderr names BUDGET_EXHAUSTED with the figures, no call past it; the log replays', async () => {
    listing({ prompt_tokens: 1000, completion_tokens: 200 }, 3);
    const r = await runCli(['run', '--base-url', srv.url, '--model', 'm', '--cwd', ws, '--approval', 'auto', '--budget', 'tokens=1500', 'look around'], { env: { BRIDLE_HOME: home } });
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('BUDGET_EXHAUSTED');
    expect(r.stderr).toContain('tokens 2400/1500 used');
    // 1200 after the first call (under 1500), 2400 after the second: the third is never made.
    expect(calls()).toBe(2);
    const log = readSessionLog(home);
    expect(log.find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'error', code: 'BUDGET_EXHAUSTED', cause: 'tokens 2400/1500 used', steps: 2 });
    expect(log.find((e) => e.kind === 'budget/asked')).toMatchObject({ used: { tokens: 2400 }, limit: { tokens: 1500 } });
    const replay = await runCli(['replay', '--machines', join(home, 'sessions', `${(log[0] as EntryOf<'session/start'>).id}.jsonl`)], { env: { BRIDLE_HOME: home } });
    expect(replay.stderr + replay.stdout).not.toMatch(/differ/);
    expect(replay.code).toBe(0);
  });

  it('a dollar budget is counted at the prices table for a provider row that is not scripted (gpt-4o list prices)', async () => {
    // gpt-4o: $2.50 in, $10 out per million: 100k in + 10k out = $0.35 a call.
    listing({ prompt_tokens: 100_000, completion_tokens: 10_000 }, 3);
    const r = await runCli(['run', '--base-url', srv.url, '--model', 'gpt-4o', '--cwd', ws, '--approval', 'auto', '--budget', 'usd=0.5', 'look around'], { env: { BRIDLE_HOME: home } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('BUDGET_EXHAUSTED');
    expect(r.stderr).toContain('usd $0.7000/$0.5000 used');
    expect(calls()).toBe(2);
    const log = readSessionLog(home);
    expect(log[0]).toMatchObject({ kind: 'session/start', config: { budget: { usd: 0.5, prices: { models: { 'gpt-4o': { input: 2.5, output: 10 } } } } } });
    const replay = await runCli(['replay', '--machines', join(home, 'sessions', `${(log[0] as EntryOf<'session/start'>).id}.jsonl`)], { env: { BRIDLE_HOME: home } });
    expect(replay.code).toBe(0);
  });

  it('a budget flag that is not tokens=N,usd=X is one usage line, exit 2', async () => {
    const r = await runCli(['run', '--base-url', srv.url, '--model', 'm', '--cwd', ws, '--budget', 'dollars=3', 'x'], { env: { BRIDLE_HOME: home } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--budget wants tokens=N,usd=X');
    expect(calls()).toBe(0);
  });
});

describe('a budget under serve', () => {
  const serving = serverPerTest();

  it('a budget that pauses under serve (the call is made once after approval)', async () => {
    let asked = 0;
    const t = await serving.start(
      (_req, i) => {
        asked++;
        return i === 0 ? { toolCalls: [{ name: 'list_dir', arguments: {} }], usage: { inputTokens: 1000, outputTokens: 200 } } : { text: 'done', usage: { inputTokens: 1000, outputTokens: 10 } };
      },
      { approval: 'ask', budget: { tokens: 1000 } },
    );
    const c = await serving.connect();
    const { sessionId } = await c.call('session/create', {});
    await c.call('session/attach', { sessionId });
    await c.call('session/input', { sessionId, text: 'look around' });
    const req = (await c.waitFor((m) => m.method === 'approval/request')).params;
    expect(req).toMatchObject({ sessionId, callId: 't1.budget1', tool: 'budget', args: { used: { tokens: 1200, usd: 0 }, limit: { tokens: 1000 } } });
    // Asked, not yet answered: one call made, the question logged before it went out.
    expect(asked).toBe(1);
    expect(c.entries(sessionId).some((e) => e.kind === 'budget/asked')).toBe(true);
    expect(await c.call('approval/respond', { sessionId, callId: req.callId, outcome: 'allowed-once' })).toEqual({ accepted: true });
    await c.waitFor((m) => m.method === 'session/entry' && m.params.sessionId === sessionId && m.params.entry.kind === 'turn/end');
    expect(asked).toBe(2);
    const es = c.entries(sessionId);
    expect(es.find((e) => e.kind === 'budget/decided')).toMatchObject({ outcome: 'allowed-once', by: 'ws:client-1', limit: { tokens: 2200 } });
    expect(es.find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'completed', steps: 2 });
    const decidedAt = es.findIndex((e) => e.kind === 'budget/decided');
    expect(es.slice(decidedAt).filter((e) => e.kind === 'step/start')).toHaveLength(1);
  });

  it('a pending budget approval survives a crash: a server that goes on with the log asks its clients again, and a yes makes the call once', async () => {
    let calls = 0;
    const spend = (_req: unknown, i: number) => (calls++, i === 0 ? { toolCalls: [{ name: 'list_dir', arguments: {} }], usage: { inputTokens: 1000, outputTokens: 200 } } : { text: 'done', usage: { inputTokens: 10, outputTokens: 1 } });
    let t = await serving.start(spend, { approval: 'ask', budget: { tokens: 1000 } });
    const a = await serving.connect();
    const { sessionId } = await a.call('session/create', {});
    await a.call('session/attach', { sessionId });
    await a.call('session/input', { sessionId, text: 'look around' });
    const first = (await a.waitFor((m) => m.method === 'approval/request')).params;
    const left = t.sessions[0]!.recorder.entries.slice();
    await t.stop();
    expect(calls).toBe(1);
    calls = 0;
    t = await serving.start((_req) => (calls++, { text: 'done', usage: { inputTokens: 10, outputTokens: 1 } }), { approval: 'ask', budget: { tokens: 1000 }, continueFrom: left });
    const b = await serving.connect();
    expect((await b.call('session/create', {})).sessionId).toBe(sessionId);
    await b.call('session/attach', { sessionId });
    const req = (await b.waitFor((m) => m.method === 'approval/request')).params;
    expect({ tool: req.tool, args: req.args }).toEqual({ tool: first.tool, args: first.args });
    expect(calls).toBe(0);
    expect(await b.call('approval/respond', { sessionId, callId: req.callId, outcome: 'allowed-once' })).toEqual({ accepted: true });
    await b.waitFor((m) => m.method === 'session/entry' && m.params.sessionId === sessionId && m.params.entry.kind === 'turn/end');
    expect(calls).toBe(1);
    const log = t.sessions[0]!.recorder.entries;
    expect(log.filter((e) => e.kind === 'budget/asked')).toHaveLength(2);
    expect(log.filter((e) => e.kind === 'turn/start')).toHaveLength(1);
    expect(log.find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'completed', steps: 2 });
    expect(verifyLog([...log]).violations).toEqual([]);
  });
});
