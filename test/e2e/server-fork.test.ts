/** `session/fork` over the wire (ADR 0029): the fork is written from the hosted session's log and hosted, then runs like any session. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemorySessionStore } from '../../adapters/store/memory.js';
import { MethodResults } from '../../server/protocol.js';
import { serverPerTest } from '../helpers/server-per-test.js';

const serving = serverPerTest();

const turnEnded = (id: string, turn: string) => (m: { method?: string; params?: any }) => m.method === 'session/entry' && m.params.sessionId === id && m.params.entry.kind === 'checkpoint' && m.params.entry.turn === turn;

/**
 * The start of a what-if: a hosted session (approvals asked) whose model asks at its first step to write out.txt with
 * `content`, the call answered `outcome`, the turn ended. `decided` is that answer's entry; `calls` counts model calls.
 */
async function writeAnswered(content: string, outcome: 'rejected' | 'allowed-once') {
  const sessions = createMemorySessionStore();
  let calls = 0;
  const t = await serving.start(
    () => (calls++ === 0 ? { text: 'Writing.', toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content } }] } : { text: `answer ${calls}` }),
    { sessions, approval: 'ask' },
  );
  const c = await serving.connect();
  const { sessionId } = await c.call('session/create', {});
  await c.call('session/attach', { sessionId });
  await c.call('session/input', { sessionId, text: 'write out.txt' });
  const req = (await c.waitFor((m) => m.method === 'approval/request')).params;
  await c.call('approval/respond', { sessionId, callId: req.callId, outcome });
  await c.waitFor(turnEnded(sessionId, 't1'));
  const decided = sessions.get(sessionId)!.lines.map((l) => JSON.parse(l) as { kind: string; seq: number }).find((e) => e.kind === 'approval/decided')!;
  return { sessions, t, c, sessionId, req, decided, calls: () => calls };
}

describe('session/fork over WebSocket', () => {
  it('forks a hosted session at its last completed turn; the fork is hosted and runs a new turn without re-running the old one', async () => {
    const sessions = createMemorySessionStore();
    const seen: string[][] = [];
    const t = await serving.start(
      (req) => {
        // Counted across sessions: each session has a model of its own.
        const i = seen.push(req.messages.map((m) => (m.role === 'user' ? m.content : m.role))) - 1;
        return i === 0 ? { text: 'Listing.', toolCalls: [{ name: 'list_dir', arguments: {} }] } : { text: `answer ${i}` };
      },
      { sessions },
    );
    const c = await serving.connect();
    const { sessionId } = await c.call('session/create', {});
    await c.call('session/attach', { sessionId });
    await c.call('session/input', { sessionId, text: 'what is here?' });
    await c.waitFor(turnEnded(sessionId, 't1'));
    expect(seen).toHaveLength(2);
    const original = sessions.get(sessionId)!.lines.slice();

    // Inside the turn: refused, naming the nearest valid points.
    const bad = await c.request('session/fork', { sessionId, at: 5 });
    expect(bad.error).toMatchObject({ code: -32009, data: { reason: 'FORK_REFUSED' } });
    expect(bad.error!.message).toMatch(/^FORK_INSIDE_TURN: the fork point seq 5 is inside turn t1 .*fork at seq 1 \(the header alone\) or seq \d+ \(after t1\)$/);
    expect((await c.request('session/fork', { sessionId: 'nope' })).error).toMatchObject({ code: -32001 });

    const forked = MethodResults['session/fork'].parse(await c.call('session/fork', { sessionId }));
    expect(forked).toEqual({ sessionId: 'f1', forkOf: { session: sessionId, seq: original.length }, hosted: true });
    expect(sessions.get('f1')!.lines.slice(1, original.length)).toEqual(original.slice(1));
    const { sessions: listed } = await c.call('session/list', {});
    expect(listed.map((s: { sessionId: string }) => s.sessionId)).toEqual([sessionId, 'f1']);

    await c.call('session/attach', { sessionId: 'f1' });
    await c.call('session/input', { sessionId: 'f1', text: 'what if it were not?' });
    await c.waitFor(turnEnded('f1', 't2'));
    // One model call for the fork's new turn, which sees the old turn as history; the old list_dir did not run again.
    expect(seen).toHaveLength(3);
    expect(seen[2]!.filter((m) => m !== 'assistant' && m !== 'tool')).toEqual(['what is here?', 'what if it were not?']);
    const fork = sessions.get('f1')!.lines.map((l) => JSON.parse(l) as { kind: string; seq: number });
    expect(fork.filter((e) => e.seq > original.length && e.kind === 'tool/dispatch')).toEqual([]);
    expect(sessions.get(sessionId)!.lines).toEqual(original);
  });

  it('a what-if approve at the owner\'s rejection runs nothing by itself: the hosted fork asks the call again of its attached clients, and runs it once on their yes (ADR 0038)', async () => {
    const { sessions, t, c, sessionId, req, decided, calls } = await writeAnswered('forked\n', 'rejected');
    const original = sessions.get(sessionId)!.lines.slice();

    const forked = MethodResults['session/fork'].parse(await c.call('session/fork', { sessionId, at: decided.seq, answer: 'approve' }));
    expect(forked).toEqual({ sessionId: 'f1', forkOf: { session: sessionId, seq: decided.seq - 1 }, hosted: true });
    const fork = () => sessions.get('f1')!.lines.map((l) => JSON.parse(l) as { kind: string; seq: number; callId?: string; status?: string; turn?: string; outcome?: string; by?: string });
    // Hosted and going on, yet waiting on the question, asked anew: nothing dispatched, nothing written, no answer logged.
    while (fork().length < decided.seq + 1) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 100));
    expect(fork().filter((e) => e.seq >= decided.seq).map((e) => [e.kind, e.callId])).toEqual([['session/reopen', undefined], ['approval/asked', req.callId]]);
    expect(fs.existsSync(path.join(t.workspace, 'out.txt'))).toBe(false);

    // Whoever attaches to the fork is asked, through the ordinary approval path.
    await c.call('session/attach', { sessionId: 'f1' });
    const again = (await c.waitFor((m) => m.method === 'approval/request' && m.params.sessionId === 'f1')).params;
    expect(again).toMatchObject({ callId: req.callId, tool: 'write_file' });
    expect(fs.existsSync(path.join(t.workspace, 'out.txt'))).toBe(false);
    await c.call('approval/respond', { sessionId: 'f1', callId: req.callId, outcome: 'allowed-once' });
    while (!fork().some((e) => e.kind === 'checkpoint')) await new Promise((r) => setTimeout(r, 5));
    expect(fs.readFileSync(path.join(t.workspace, 'out.txt'), 'utf8')).toBe('forked\n');
    const added = fork().filter((e) => e.seq >= decided.seq);
    expect(added.find((e) => e.kind === 'approval/decided')).toMatchObject({ callId: req.callId, outcome: 'allowed-once', by: expect.stringMatching(/^ws:client-/) });
    expect(added.filter((e) => e.kind === 'tool/dispatch').map((e) => e.callId)).toEqual([req.callId]);
    expect(added.find((e) => e.kind === 'tool/result')).toMatchObject({ callId: req.callId, status: 'ok' });
    expect(added.find((e) => e.kind === 'turn/end')).toMatchObject({ turn: 't1' });
    // Two model calls in the original, one in the fork (its step after the call).
    expect(calls()).toBe(3);
    expect(sessions.get(sessionId)!.lines).toEqual(original);
  });

  it('a what-if deny is the fork\'s answer: hosted, the model hears of the denial, nothing runs', async () => {
    const { sessions, t, c, sessionId, req, decided } = await writeAnswered('x', 'allowed-once');
    fs.rmSync(path.join(t.workspace, 'out.txt'));
    expect(MethodResults['session/fork'].parse(await c.call('session/fork', { sessionId, at: decided.seq, answer: 'deny' }))).toMatchObject({ sessionId: 'f1', hosted: true });
    const fork = () => sessions.get('f1')!.lines.map((l) => JSON.parse(l) as { kind: string; callId?: string; status?: string; outcome?: string; by?: string });
    while (!fork().some((e) => e.kind === 'checkpoint')) await new Promise((r) => setTimeout(r, 5));
    expect(fork().find((e) => e.kind === 'approval/decided')).toMatchObject({ outcome: 'rejected', by: 'fork' });
    expect(fork().find((e) => e.kind === 'tool/result')).toMatchObject({ callId: req.callId, status: 'denied' });
    expect(fork().some((e) => e.kind === 'tool/dispatch')).toBe(false);
    expect(fs.existsSync(path.join(t.workspace, 'out.txt'))).toBe(false);
  });
});
