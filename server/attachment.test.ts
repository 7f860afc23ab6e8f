import { describe, expect, it } from 'vitest';
import type { Entry } from '../log/entries.js';
import { ApprovalDesk } from './approvals.js';
import { Attachment, type Peer } from './attachment.js';

const entry = (seq: number) => ({ seq, at: '2026-01-01T00:00:00.000Z', kind: 'step/start', turn: 't1', step: 't1.s1' }) as Entry;
const ser = (e: Entry) => String(e.seq);

function peer(): Peer & { got: number[]; gone: boolean } {
  const p = {
    label: 'p',
    got: [] as number[],
    gone: false,
    send: (t: string) => (p.gone ? false : (p.got.push(Number(t)), true)),
    room: async () => !p.gone,
  };
  return p;
}

describe('an attachment', () => {
  it('sends backlog then buffered entries, dropping what overlaps, then goes live', async () => {
    const p = peer();
    const a = new Attachment(p, 3, ser);
    // Live entries that arrive before the backlog is read are held…
    a.offer(entry(5), '5');
    a.offer(entry(6), '6');
    let lived = 0;
    // …and the backlog overlaps them (it was read after they became durable).
    const started = a.start([3, 4, 5].map(entry), p.room, () => lived++);
    a.offer(entry(7), '7'); // while the backlog is being paced
    await started;
    a.offer(entry(7), '7'); // a duplicate
    a.offer(entry(8), '8');
    expect(p.got).toEqual([3, 4, 5, 6, 7, 8]);
    expect(lived).toBe(1);
    expect(a.isLive).toBe(true);
  });

  it('never sends an entry before fromSeq', async () => {
    const p = peer();
    const a = new Attachment(p, 10, ser);
    await a.start([], p.room);
    a.offer(entry(9), '9');
    a.offer(entry(10), '10');
    expect(p.got).toEqual([10]);
  });

  it('an ended feed sends its last message after the backlog and buffer it still owes, once; a live one at once', async () => {
    const p = peer();
    const a = new Attachment(p, 1, ser);
    a.offer(entry(3), '3');
    a.end('99');
    a.end('98');
    expect(p.got).toEqual([]);
    await a.start([1, 2].map(entry), p.room);
    expect(p.got).toEqual([1, 2, 3, 99]);

    const q = peer();
    const live = new Attachment(q, 1, ser);
    await live.start([], q.room);
    live.end('99');
    expect(q.got).toEqual([99]);
    expect(live.ended).toBe(true);
  });

  it('stops when the peer is gone', async () => {
    const p = peer();
    const a = new Attachment(p, 1, ser);
    p.gone = true;
    let lived = false;
    await a.start([1, 2].map(entry), p.room, () => (lived = true));
    expect(p.got).toEqual([]);
    expect(lived).toBe(false);
  });
});

describe('the approval desk', () => {
  const ask = (desk: ApprovalDesk, callId: string, signal = new AbortController().signal) =>
    desk.answerer({ callId, name: 'bash', arguments: '{"command":"ls"}', reason: 'runs commands', presented: '$ ls', always: { tool: 'bash', pattern: '^ls$' }, signal });

  it('asks, takes the first answer, and refuses the second', async () => {
    const asked: unknown[] = [];
    const desk = new ApprovalDesk(() => 's1', { beforeAsk: async () => undefined, announce: (r) => asked.push(r) });
    const answer = ask(desk, 't1.s1.c1');
    await new Promise((r) => setImmediate(r));
    expect(asked).toEqual([{ sessionId: 's1', callId: 't1.s1.c1', tool: 'bash', args: { command: 'ls' }, reason: 'runs commands', presented: '$ ls' }]);
    expect(desk.open()).toHaveLength(1);
    expect(desk.respond('t1.s1.c1', 'allowed-once', 'ws:a')).toBe(true);
    expect(desk.respond('t1.s1.c1', 'rejected', 'ws:b')).toBe(false);
    expect(await answer).toEqual({ outcome: 'allowed-once', by: 'ws:a' });
    expect(desk.open()).toEqual([]);
    expect(desk.respond('t9.s1.c1', 'rejected', 'ws:a')).toBe(false);
  });

  it('answers cancelled when the call is aborted, and then refuses answers', async () => {
    const desk = new ApprovalDesk(() => 's1', { beforeAsk: async () => undefined, announce: () => undefined });
    const ac = new AbortController();
    const answer = ask(desk, 't1.s1.c1', ac.signal);
    await new Promise((r) => setImmediate(r));
    ac.abort();
    expect(await answer).toEqual({ outcome: 'cancelled', by: 'cancel' });
    expect(desk.respond('t1.s1.c1', 'allowed-once', 'ws:a')).toBe(false);
  });
});
