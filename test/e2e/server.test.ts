/**
 * The WebSocket server with a real client that knows only docs/protocol.md:
 * create, list, attach (with fromSeq, racing a running turn), input, deltas,
 * state, snapshot, cancel, approvals over the wire.
 */
import { describe, expect, it } from 'vitest';
import { MethodResults, NotificationParams } from '../../server/protocol.js';
import { verifyLog } from '../../log/verify.js';
import { RpcClient } from '../helpers/rpc-client.js';
import { serverPerTest } from '../helpers/server-per-test.js';

const srv = serverPerTest();
const connect = () => srv.connect();
const seqs = (c: RpcClient, id: string) => c.entries(id).map((e) => e.seq);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const turnEnded = (id: string) => (m: { method?: string; params?: any }) => m.method === 'session/entry' && m.params.sessionId === id && m.params.entry.kind === 'turn/end';

describe('bridle serve, over the wire', () => {
  it('session/compact runs a compaction between turns; its brackets arrive as entries', async () => {
    const t = await srv.start((req) =>
      JSON.stringify(req.messages.at(-1)).includes('Summarize') || JSON.stringify(req.messages.at(-1)).includes('summary')
        ? { text: '## Request and intent\nx\n## Key facts\nx\n## Files touched\nnone\n## Errors and fixes\nnone\n## Current work\nnone\n## Next step\nnone' }
        : { text: 'a fairly long answer '.repeat(40) },
    );
    const c = await connect();
    const { sessionId } = await c.call('session/create', {});
    await c.call('session/attach', { sessionId });
    for (const text of ['one', 'two', 'three']) {
      await c.call('session/input', { sessionId, text });
    }
    await c.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'checkpoint' && m.params.entry.turn === 't3');
    expect(await c.call('session/compact', { sessionId })).toEqual({ requested: true });
    const end = await c.waitFor((m) => m.method === 'session/entry' && m.params.sessionId === sessionId && m.params.entry.kind === 'compaction/end');
    expect(end.params.entry.outcome).toBe('compacted');
    expect(end.params.entry.tokensAfter).toBeLessThan(end.params.entry.tokensBefore);
    expect(c.entries(sessionId).some((e) => e.kind === 'compaction/start')).toBe(true);
  });

  it('creates, lists, attaches and runs a turn; entries arrive once each, in seq order, after they are durable', async () => {
    const t = await srv.start((_req, i) => (i === 0 ? { text: 'Listing.', toolCalls: [{ name: 'list_dir', arguments: {} }] } : { text: 'Empty workspace.' }));
    const c = await connect();
    const { sessionId } = await c.call('session/create', {});
    const { sessions } = await c.call('session/list', {});
    expect(sessions).toEqual([expect.objectContaining({ sessionId, model: 'scripted-test', lastSeq: 1, attached: 0 })]);
    const attached = await c.call('session/attach', { sessionId });
    expect(attached).toMatchObject({ sessionId, fromSeq: 1 });
    expect(await c.call('session/input', { sessionId, text: 'what is here?' })).toMatchObject({ accepted: true });
    await c.waitFor(turnEnded(sessionId));
    await c.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'checkpoint');

    const log = t.sessions[0]!.recorder.entries;
    expect(c.entries(sessionId)).toEqual(log);
    expect(seqs(c, sessionId)).toEqual(range(1, log.length));
    // Live text came as deltas, not as entries.
    const deltas = c.notifications('session/delta', sessionId);
    expect(deltas.filter((d) => d.chunk.type === 'text-delta').map((d) => d.chunk.text).join('')).toBe('Listing.Empty workspace.');
    expect(deltas[0].step).toBe('t1.s1');
    // State changes were reported: the session went running and came back idle.
    const states = c.notifications('session/state', sessionId);
    expect(states.some((s) => JSON.stringify(s.value).includes('running'))).toBe(true);
    expect(states.some((s) => s.actors.some((a: any) => a.machine === 'step'))).toBe(true);
    const snap = await c.call('session/snapshot', { sessionId });
    expect(snap).toMatchObject({ sessionId, value: 'idle', actors: [{ id: 'session', machine: 'session', value: 'idle', parent: null }], durableSeq: log.length });
    // The response to attach came before the first entry.
    const firstEntry = c.messages.findIndex((m) => m.method === 'session/entry');
    const attachReply = c.messages.findIndex((m) => m.result?.fromSeq === 1);
    expect(attachReply).toBeLessThan(firstEntry);
    // Everything the server sent matches the protocol's schemas.
    for (const m of c.messages) {
      if (m.method) NotificationParams[m.method as keyof typeof NotificationParams].parse(m.params);
      else MethodResults[c.sent.get(m.id!) as keyof typeof MethodResults].parse(m.result);
    }
  });

  it('snapshot shows the running turn, step and tool calls', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const t = await srv.start(async (_req, i) => {
      if (i === 1) await gate;
      return i === 0 ? { toolCalls: [{ name: 'list_dir', arguments: {} }] } : { text: 'done' };
    });
    const c = await connect();
    const { sessionId } = await c.call('session/create', {});
    await c.call('session/attach', { sessionId });
    await c.call('session/input', { sessionId, text: 'go' });
    let snap: any;
    for (let i = 0; i < 200; i++) {
      snap = await c.call('session/snapshot', { sessionId });
      if (snap.actors.some((a: any) => a.machine === 'step' && a.value === 'streaming')) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(snap.value).toEqual({ running: 'active' });
    expect(snap.actors.map((a: any) => `${a.parent}>${a.id}:${a.machine}`)).toEqual(['null>session:session', 'session>turn:turn', 'turn>step:step']);
    release();
  });

  it('attaching with fromSeq while a turn runs gives exactly the entries from that seq on: no gap, no duplicate', async () => {
    const t = await srv.start(
      (_req, i) => (i < 6 ? { text: `step ${i}`, toolCalls: [{ name: 'list_dir', arguments: {} }, { name: 'glob', arguments: { pattern: '*' } }] } : { text: 'done' }),
      { scripted: { delayMs: 1 } },
    );
    const owner = await connect();
    const { sessionId } = await owner.call('session/create', {});
    await owner.call('session/attach', { sessionId });
    await owner.call('session/input', { sessionId, text: 'go' });
    // Attach more clients at different moments of the turn, each from a seq at or behind what is durable.
    const late: { c: RpcClient; from: number }[] = [];
    for (let k = 0; k < 12; k++) {
      await new Promise((r) => setTimeout(r, 3 + k));
      const durable = t.sessions[0]!.recorder.durableUpTo;
      const from = Math.max(1, durable - (k % 4) * 3 + (k % 3 === 0 ? 2 : 0));
      const c = await connect();
      await c.call('session/attach', { sessionId, fromSeq: from });
      late.push({ c, from });
    }
    await owner.waitFor(turnEnded(sessionId), 20_000);
    await owner.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'checkpoint');
    const last = t.sessions[0]!.recorder.lastSeq;
    for (const { c, from } of late) {
      await c.waitFor((m) => m.method === 'session/entry' && m.params.entry.seq === last, 5000, `seq ${last}`);
      expect(seqs(c, sessionId)).toEqual(range(from, last));
    }
    expect(seqs(owner, sessionId)).toEqual(range(1, last));
  });

  it('re-attaching restarts the feed from the new fromSeq', async () => {
    const t = await srv.start(() => ({ text: 'hi' }));
    const c = await connect();
    const { sessionId } = await c.call('session/create', {});
    await c.call('session/attach', { sessionId });
    await c.call('session/input', { sessionId, text: 'hello' });
    await c.waitFor(turnEnded(sessionId));
    const before = c.entries(sessionId).length;
    await c.call('session/attach', { sessionId, fromSeq: 2 });
    await c.waitFor((m) => m.method === 'session/state' && c.entries(sessionId).length > before);
    const all = seqs(c, sessionId);
    expect(all.slice(before, before + 3)).toEqual([2, 3, 4]);
  });

  it('routes steer and inject input, and cancels a running turn', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let unblock!: () => void;
    const block = new Promise<void>((r) => (unblock = r));
    const t = await srv.start(async (req, i) => {
      if (i === 0) {
        await gate;
        return { toolCalls: [{ name: 'list_dir', arguments: {} }] };
      }
      if (i === 2) await block;
      return { text: `saw ${req.messages.filter((m) => m.role === 'user').length} user messages` };
    });
    const c = await connect();
    const { sessionId } = await c.call('session/create', {});
    await c.call('session/attach', { sessionId });
    await c.call('session/input', { sessionId, text: 'first', mode: 'followup' });
    await c.call('session/input', { sessionId, text: 'also this', mode: 'steer' });
    await c.call('session/input', { sessionId, text: 'fyi', mode: 'inject' });
    release();
    await c.waitFor(turnEnded(sessionId));
    const users = c.entries(sessionId).filter((e) => e.kind === 'user/message');
    expect(users.map((u) => [u.text, u.origin])).toEqual([
      ['first', 'user'],
      ['also this', 'steer'],
      ['fyi', 'inject'],
    ]);

    // A cancel while the next turn waits on the model ends that turn aborted.
    await c.call('session/input', { sessionId, text: 'second' });
    await c.waitFor((m) => m.method === 'session/state' && JSON.stringify(m.params.actors).includes('streaming'));
    expect(await c.call('session/cancel', { sessionId })).toEqual({ requested: true });
    const ends = () => c.entries(sessionId).filter((e) => e.kind === 'turn/end');
    await c.waitFor(() => ends().length === 2);
    expect(ends()[1]).toMatchObject({ turn: 't2', reason: 'aborted' });
    unblock();
  });

  it('reports unknown sessions and failed creates as errors, and keeps going', async () => {
    const t = await srv.start(() => ({ text: 'hi' }));
    const c = await connect();
    for (const m of ['session/attach', 'session/input', 'session/cancel', 'session/snapshot']) {
      const r = await c.request(m, { sessionId: 'nope', ...(m === 'session/input' ? { text: 'x' } : {}) });
      expect(r.error?.code).toBe(-32001);
    }
    const r = await c.request('session/create', { cwd: `${t.workspace}/not/here` });
    expect(r.error).toMatchObject({ code: -32003, message: expect.stringContaining('no such directory'), data: { reason: 'CWD_NOT_FOUND' } });
    expect(await c.call('session/list', {})).toEqual({ sessions: [] });
  });
});

describe('approvals over the wire', () => {
  const writes = (_req: unknown, i: number) =>
    i === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'x\n' } }] } : { text: 'wrote it' };

  it('asks every attached client; the first answer wins; request and decision are logged', async () => {
    const t = await srv.start(writes, { approval: 'ask' });
    const a = await connect();
    const b = await connect();
    const { sessionId } = await a.call('session/create', {});
    await a.call('session/attach', { sessionId });
    await b.call('session/attach', { sessionId });
    await a.call('session/input', { sessionId, text: 'write a file' });
    const req = (await b.waitFor((m) => m.method === 'approval/request')).params;
    expect(req).toEqual({ sessionId, callId: 't1.s1.c1', tool: 'write_file', args: { path: 'a.txt', content: 'x\n' }, reason: expect.any(String), presented: expect.stringContaining('a.txt'), change: { tool: 'write_file', path: 'a.txt', lines: [{ op: '+', text: 'x' }] } });
    await a.waitFor((m) => m.method === 'approval/request');
    // The question is in the log before it is asked.
    expect(b.entries(sessionId).some((e) => e.kind === 'approval/asked' && e.callId === 't1.s1.c1')).toBe(true);
    // A client that attaches now is asked too.
    const late = await connect();
    await late.call('session/attach', { sessionId });
    await late.waitFor((m) => m.method === 'approval/request');

    expect(await b.call('approval/respond', { sessionId, callId: 't1.s1.c1', outcome: 'allowed-once' })).toEqual({ accepted: true });
    const second = await a.request('approval/respond', { sessionId, callId: 't1.s1.c1', outcome: 'rejected' });
    expect(second.error?.code).toBe(-32002);
    await a.waitFor(turnEnded(sessionId));
    const decided = a.entries(sessionId).find((e) => e.kind === 'approval/decided');
    expect(decided).toMatchObject({ callId: 't1.s1.c1', outcome: 'allowed-once', by: 'ws:client-2' });
    expect(a.entries(sessionId).find((e) => e.kind === 'tool/result')).toMatchObject({ status: 'ok' });
  });

  it('a rejection denies the call', async () => {
    const t = await srv.start(writes, { approval: 'ask' });
    const a = await connect();
    const { sessionId } = await a.call('session/create', {});
    await a.call('session/attach', { sessionId });
    await a.call('session/input', { sessionId, text: 'write a file' });
    const req = (await a.waitFor((m) => m.method === 'approval/request')).params;
    await a.call('approval/respond', { sessionId, callId: req.callId, outcome: 'rejected' });
    await a.waitFor(turnEnded(sessionId));
    expect(a.entries(sessionId).find((e) => e.kind === 'approval/decided')).toMatchObject({ outcome: 'rejected', by: 'ws:client-1' });
    expect(a.entries(sessionId).find((e) => e.kind === 'tool/result')).toMatchObject({ status: 'denied', code: 'DENIED' });
  });

  it('a question open when the server stops stays open in the log (asked, never decided), for resume', async () => {
    const t = await srv.start(writes, { approval: 'ask' });
    const a = await connect();
    const { sessionId } = await a.call('session/create', {});
    await a.call('session/attach', { sessionId });
    await a.call('session/input', { sessionId, text: 'write a file' });
    await a.waitFor((m) => m.method === 'approval/request');
    const session = t.sessions[0]!;
    await t.server.close();
    const kinds = session.recorder.entries.map((e) => e.kind);
    expect(kinds).toContain('approval/asked');
    expect(kinds).not.toContain('approval/decided');
    expect(kinds).not.toContain('tool/result');
    expect(kinds).not.toContain('turn/end');
    expect(session.recorder.durableUpTo).toBe(session.recorder.lastSeq);
  });

  it('a server that goes on with that log asks the same question again of the clients that attach; the call runs once on approval (ADR 0027)', async () => {
    let t = await srv.start(writes, { approval: 'ask' });
    const a = await connect();
    const { sessionId } = await a.call('session/create', {});
    await a.call('session/attach', { sessionId });
    await a.call('session/input', { sessionId, text: 'write a file' });
    const first = (await a.waitFor((m) => m.method === 'approval/request')).params;
    const left = t.sessions[0]!.recorder.entries.slice();
    await t.stop();
    // The next server's session is handed the log as resume's repair leaves it (nothing appended: the turn waits on the approval).
    t = await srv.start((_req, i) => (i === 0 ? { text: 'wrote it' } : { text: 'more' }), { approval: 'ask', continueFrom: left });
    const b = await connect();
    const again = await b.call('session/create', {});
    expect(again.sessionId).toBe(sessionId);
    await b.call('session/attach', { sessionId });
    const req = (await b.waitFor((m) => m.method === 'approval/request')).params;
    expect({ callId: req.callId, name: req.name, arguments: req.arguments }).toEqual({ callId: first.callId, name: first.name, arguments: first.arguments });
    expect(await b.call('approval/respond', { sessionId, callId: req.callId, outcome: 'allowed-once' })).toEqual({ accepted: true });
    await b.waitFor(turnEnded(sessionId));
    const log = t.sessions[0]!.recorder.entries;
    expect(log.filter((e) => e.kind === 'approval/asked')).toHaveLength(2);
    expect(log.filter((e) => e.kind === 'tool/dispatch')).toHaveLength(1);
    expect(log.find((e) => e.kind === 'tool/result')).toMatchObject({ callId: first.callId, status: 'ok' });
    expect(log.filter((e) => e.kind === 'turn/start')).toHaveLength(1);
    expect(verifyLog([...log]).violations).toEqual([]);
  });
});

describe('closing sessions and the session limit', () => {
  const kinds = (c: RpcClient, id: string) => c.entries(id).map((e) => e.kind);
  const closedNote = (id: string) => (m: { method?: string; params?: any }) => m.method === 'session/closed' && m.params.sessionId === id;

  it('session/close ends a running turn cleanly: attached clients get every entry, then session/closed, and the session is gone', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const t = await srv.start(async () => (await gate, { text: 'late' }));
    const a = await connect();
    const b = await connect();
    const { sessionId } = await a.call('session/create', {});
    await a.call('session/attach', { sessionId });
    await b.call('session/attach', { sessionId });
    await a.call('session/input', { sessionId, text: 'go' });
    await b.waitFor((m) => m.method === 'session/state' && JSON.stringify(m.params.actors).includes('streaming'));
    // A follow-up queued behind the running turn is dropped: nothing starts after a close.
    await a.call('session/input', { sessionId, text: 'then this' });
    expect(await a.call('session/close', { sessionId })).toEqual({ closed: true });
    const note = await b.waitFor(closedNote(sessionId));
    const log = t.sessions[0]!.recorder.entries;
    expect(note.params).toEqual({ sessionId, lastSeq: log.at(-1)!.seq });
    for (const c of [a, b]) {
      expect(c.entries(sessionId)).toEqual(log);
      // session/closed is the last word about the session.
      const last = c.messages.filter((m) => m.params?.sessionId === sessionId).at(-1);
      expect(last?.method).toBe('session/closed');
    }
    expect(log.filter((e) => e.kind === 'turn/start')).toHaveLength(1);
    expect(log.find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'aborted' });
    expect(kinds(b, sessionId).slice(-2)).toEqual(['turn/end', 'checkpoint']);
    expect(verifyLog(log).violations).toEqual([]);
    expect(await a.call('session/list', {})).toEqual({ sessions: [] });
    for (const m of ['session/input', 'session/attach', 'session/close']) {
      expect((await a.request(m, { sessionId, ...(m === 'session/input' ? { text: 'x' } : {}) })).error).toMatchObject({ code: -32001, data: { reason: 'UNKNOWN_SESSION' } });
    }
    release();
    MethodResults['session/close'].parse({ closed: true });
    NotificationParams['session/closed'].parse(note.params);
  });

  it('session/close decides an open approval cancelled, and closes an idle session at once', async () => {
    const t = await srv.start((_req, i) => (i === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }] } : { text: 'done' }), { approval: 'ask' });
    const a = await connect();
    const { sessionId } = await a.call('session/create', {});
    await a.call('session/attach', { sessionId });
    await a.call('session/input', { sessionId, text: 'write' });
    await a.waitFor((m) => m.method === 'approval/request');
    await a.call('session/close', { sessionId });
    await a.waitFor(closedNote(sessionId));
    expect(a.entries(sessionId).find((e) => e.kind === 'approval/decided')).toMatchObject({ outcome: 'cancelled' });
    expect(verifyLog(t.sessions[0]!.recorder.entries).violations).toEqual([]);

    const idle = (await a.call('session/create', {})).sessionId;
    await a.call('session/attach', { sessionId: idle });
    expect(await a.call('session/close', { sessionId: idle })).toEqual({ closed: true });
    expect(t.sessions[1]!.recorder.entries.map((e) => e.kind)).toEqual(['session/start', 'session/end']);
  });

  it('a session with no client attached and no turn running is released after the idle time; one with a client or a turn is kept', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const t = await srv.start(async (req) => (JSON.stringify(req.messages).includes('slow') ? (await gate, { text: 'slow done' }) : { text: 'ok' }), { idleTimeoutMs: 150 });
    const watcher = await connect();
    const lonely = (await watcher.call('session/create', {})).sessionId;
    const watched = (await watcher.call('session/create', {})).sessionId;
    const busy = (await watcher.call('session/create', {})).sessionId;
    await watcher.call('session/attach', { sessionId: watched });
    // Input needs attaching (issue 20, item 2): the sender attaches, sends, and goes, leaving the turn running unwatched.
    const sender = await connect();
    await sender.call('session/attach', { sessionId: busy });
    await sender.call('session/input', { sessionId: busy, text: 'slow' });
    sender.close();
    const listed = async () => ((await watcher.call('session/list', {})).sessions as { sessionId: string }[]).map((s) => s.sessionId).sort();
    const until = async (want: string[]) => {
      for (let i = 0; i < 200 && JSON.stringify(await listed()) !== JSON.stringify([...want].sort()); i++) await new Promise((r) => setTimeout(r, 20));
      expect(await listed()).toEqual([...want].sort());
    };
    await until([watched, busy]);
    // Nobody was attached to it, so nobody was told; its log is whole.
    expect(watcher.notifications('session/closed')).toEqual([]);
    expect(verifyLog(t.sessions[0]!.recorder.entries).violations).toEqual([]);
    // Held 3 × the idle time: an attached session and one running a turn stay.
    await new Promise((r) => setTimeout(r, 450));
    expect(await listed()).toEqual([watched, busy].sort());
    release();
    await until([watched]);
    expect(t.sessions[2]!.recorder.entries.filter((e) => e.kind === 'turn/end')).toMatchObject([{ reason: 'completed' }]);
    // Once its last client goes, the watched one is released too.
    const other = await connect();
    watcher.close();
    for (let i = 0; i < 200 && (await other.call('session/list', {})).sessions.length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await other.call('session/list', {})).toEqual({ sessions: [] });
  });

  it('session/create beyond maxSessions is refused with -32005 SESSION_LIMIT, a burst from many clients cannot overshoot it, and a close frees a slot', async () => {
    const t = await srv.start(() => ({ text: 'hi' }), { maxSessions: 5 });
    const cs = await Promise.all(Array.from({ length: 8 }, () => connect()));
    const answers = await Promise.all(cs.flatMap((c) => Array.from({ length: 6 }, () => c.request('session/create', {}))));
    const made = answers.filter((r) => r.result).map((r) => r.result.sessionId as string);
    const refused = answers.filter((r) => r.error);
    expect(made).toHaveLength(5);
    expect(refused).toHaveLength(43);
    for (const r of refused) expect(r.error).toMatchObject({ code: -32005, data: { reason: 'SESSION_LIMIT' }, message: expect.stringContaining('limit of 5') });
    expect((await cs[0]!.call('session/list', {})).sessions).toHaveLength(5);
    await cs[0]!.call('session/attach', { sessionId: made[0] });
    await cs[0]!.call('session/close', { sessionId: made[0] });
    expect(await cs[1]!.call('session/create', {})).toHaveProperty('sessionId');
    expect((await cs[2]!.request('session/create', {})).error?.code).toBe(-32005);
  });
});
