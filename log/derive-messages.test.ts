import { describe, expect, it } from 'vitest';
import { deriveMessages, messageOf, Projection } from './derive-messages.js';
import { isVisible } from './visible.js';
import type { Entry } from './entries.js';

const at = '2026-01-01T00:00:00.000Z';
let seq = 0;
const e = <T extends Omit<Entry, 'seq' | 'at'>>(x: T) => ({ seq: ++seq, at, ...x }) as unknown as Entry;

describe('deriveMessages', () => {
  it('renders user, assistant and tool results, results in call order even when logged out of order', () => {
    seq = 0;
    const log = [
      e({ kind: 'user/message', turn: 't1', text: 'hi', origin: 'user', surfaceOp: 'append' }),
      e({
        kind: 'assistant/message',
        turn: 't1',
        step: 't1.s1',
        blocks: [
          { type: 'reasoning', text: 'think' },
          { type: 'text', text: 'looking' },
          { type: 'tool-call', id: 'a', name: 'read_file', arguments: '{"path":"x"}' },
          { type: 'tool-call', id: 'b', name: 'list_dir', arguments: '{}' },
        ],
        finish: { kind: 'ok', reason: 'tool-calls' },
        surfaceOp: 'append',
      }),
      e({ kind: 'tool/result', turn: 't1', step: 't1.s1', callId: 't1.s1.c2', toolCallId: 'b', name: 'list_dir', status: 'ok', content: 'B', surfaceOp: 'append' }),
      e({ kind: 'tool/result', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', toolCallId: 'a', name: 'read_file', status: 'ok', content: 'A', surfaceOp: 'append' }),
    ];
    expect(deriveMessages(log)).toEqual([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: 'looking',
        reasoning: 'think',
        toolCalls: [
          { id: 'a', name: 'read_file', arguments: '{"path":"x"}' },
          { id: 'b', name: 'list_dir', arguments: '{}' },
        ],
      },
      { role: 'tool', toolCallId: 'a', content: 'A' },
      { role: 'tool', toolCallId: 'b', content: 'B' },
    ]);
  });

  it('a replace shadows the span it cites, in place, without deleting it from the log', () => {
    seq = 0;
    const log = [
      e({ kind: 'user/message', turn: 't1', text: 'one', origin: 'user', surfaceOp: 'append' }),
      e({ kind: 'assistant/message', turn: 't1', step: 't1.s1', blocks: [{ type: 'text', text: 'r1' }], finish: { kind: 'ok', reason: 'stop' }, surfaceOp: 'append' }),
      e({ kind: 'user/message', turn: 't2', text: 'two', origin: 'user', surfaceOp: 'append' }),
      e({ kind: 'user/message', turn: 't2', text: 'S', origin: 'summary', surfaceOp: { op: 'replace', start: 1, end: 2 } }),
    ];
    const m = deriveMessages(log);
    expect(m).toHaveLength(2);
    expect(m[0]).toEqual({ role: 'user', content: expect.stringContaining('[Summary of earlier work') });
    expect(m[1]).toEqual({ role: 'user', content: 'two' });
    expect(log).toHaveLength(4);
  });

  it('skips assistant messages with nothing to say (a failed request)', () => {
    seq = 0;
    const log = [e({ kind: 'assistant/message', turn: 't1', step: 't1.s1', blocks: [], finish: { kind: 'error', code: 'SERVER', message: 'x' }, surfaceOp: 'append' })];
    expect(deriveMessages(log)).toEqual([]);
  });

  it('the incremental projection agrees with the fold at every prefix', () => {
    seq = 0;
    const log = [
      e({ kind: 'user/message', turn: 't1', text: 'q', origin: 'user', surfaceOp: 'append' }),
      e({ kind: 'assistant/message', turn: 't1', step: 't1.s1', blocks: [{ type: 'tool-call', id: 'x', name: 'n', arguments: '' }, { type: 'tool-call', id: 'y', name: 'n', arguments: '' }, { type: 'tool-call', id: 'z', name: 'n', arguments: '' }], finish: { kind: 'ok', reason: 'tool-calls' }, surfaceOp: 'append' }),
      e({ kind: 'tool/result', turn: 't1', step: 't1.s1', callId: 't1.s1.c3', toolCallId: 'z', name: 'n', status: 'ok', content: '3', surfaceOp: 'append' }),
      e({ kind: 'tool/result', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', toolCallId: 'x', name: 'n', status: 'ok', content: '1', surfaceOp: 'append' }),
      e({ kind: 'tool/result', turn: 't1', step: 't1.s1', callId: 't1.s1.c2', toolCallId: 'y', name: 'n', status: 'ok', content: '2', surfaceOp: 'append' }),
      e({ kind: 'assistant/message', turn: 't1', step: 't1.s2', blocks: [{ type: 'text', text: 'done' }], finish: { kind: 'ok', reason: 'stop' }, surfaceOp: 'append' }),
    ];
    const p = new Projection();
    log.forEach((x, i) => {
      p.apply(x);
      expect(p.messages).toEqual(deriveMessages(log.slice(0, i + 1)));
    });
    expect(p.messages.filter((m) => m.role === 'tool').map((m) => (m as { content: string }).content)).toEqual(['1', '2', '3']);
  });

  it('a replace takes in an earlier replacement whose span lies inside its own, never what was logged between (nested summaries)', () => {
    seq = 0;
    const u = (text: string) => e({ kind: 'user/message', turn: 't1', text, origin: 'user', surfaceOp: 'append' });
    const log = [u('one'), u('two'), u('three'), u('four')];
    log.push(e({ kind: 'user/message', turn: 't1', text: 'S1', origin: 'summary', surfaceOp: { op: 'replace', start: 1, end: 2 } }));
    log.push(u('six'));
    // S2 stands for 1..3: S1 (seq 5, standing for 1..2) goes, 'four' (seq 4) and 'six' (seq 6) stay.
    log.push(e({ kind: 'user/message', turn: 't1', text: 'S2', origin: 'summary', surfaceOp: { op: 'replace', start: 1, end: 3 } }));
    const m = deriveMessages(log).map((x) => (x as { content: string }).content);
    expect(m).toEqual([expect.stringMatching(/S2$/), 'four', 'six']);
    const p = new Projection();
    log.forEach((x, i) => {
      p.apply(x);
      expect(p.messages).toEqual(deriveMessages(log.slice(0, i + 1)));
    });
  });
});

describe('messageOf', () => {
  it("is the one message an entry alone projects to, for every kind, origin and verdict (the meter's measure, #26)", () => {
    seq = 0;
    const log = [
      e({ kind: 'user/message', turn: 't1', text: 'hi', origin: 'user', surfaceOp: 'append' }),
      e({ kind: 'user/message', turn: 't1', text: 'earlier', origin: 'summary', verdict: 'uncertain', surfaceOp: 'append' }),
      e({
        kind: 'assistant/message',
        turn: 't1',
        step: 't1.s1',
        blocks: [
          { type: 'reasoning', text: 'think', provider: 'anthropic', data: 'sig' },
          { type: 'text', text: 'looking' },
          { type: 'tool-call', id: 'a', name: 'read_file', arguments: '{"path":"x"}' },
        ],
        finish: { kind: 'ok', reason: 'tool-calls' },
        surfaceOp: 'append',
      }),
      e({ kind: 'assistant/message', turn: 't1', step: 't1.s2', blocks: [], finish: { kind: 'ok', reason: 'stop' }, surfaceOp: 'append' }),
      e({ kind: 'tool/result', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', toolCallId: 'a', name: 'read_file', status: 'ok', content: 'A', verdict: 'rejected', surfaceOp: 'append' }),
    ];
    for (const entry of log) {
      if (!isVisible(entry)) throw new Error('not visible');
      const m = messageOf(entry);
      expect(m === undefined ? [] : [m]).toEqual(deriveMessages([entry]));
    }
    expect(messageOf(log[3] as never)).toBeUndefined();
  });
});

describe('tool results in call order, however many calls an answer has', () => {
  /** One answer calling `ids` in order, then a result per entry of `results` (an id, and its content), logged in that order. */
  const answerThenResults = (ids: string[], results: [string, string][]) => {
    seq = 0;
    return [
      e({ kind: 'assistant/message', turn: 't1', step: 't1.s1', blocks: ids.map((id) => ({ type: 'tool-call', id, name: 'noop', arguments: '{}' })), finish: { kind: 'ok', reason: 'tool-calls' }, surfaceOp: 'append' }),
      ...results.map(([id, content], i) => e({ kind: 'tool/result', turn: 't1', step: 't1.s1', callId: `t1.s1.c${i + 1}`, toolCallId: id, name: 'noop', status: 'ok', content, surfaceOp: 'append' })),
    ];
  };
  const toolContents = (log: Entry[]) => deriveMessages(log).flatMap((m) => (m.role === 'tool' ? [m.content] : []));

  it.each([3, 32, 33, 40])('%i calls whose results are logged in a shuffled order are read in call order', (n) => {
    const ids = Array.from({ length: n }, (_, i) => `call_${i}`);
    // A fixed shuffle: i * 7 mod n visits every index when n is not a multiple of 7.
    const order = Array.from({ length: n }, (_, i) => (i * 7 + 3) % n);
    expect(new Set(order).size).toBe(n);
    expect(toolContents(answerThenResults(ids, order.map((i) => [ids[i]!, String(i)])))).toEqual(ids.map((_, i) => String(i)));
  });

  it.each([3, 40])('with %i calls, a repeated id ranks as its last call, and a result for no call goes at the end', (n) => {
    const ids = Array.from({ length: n }, (_, i) => `call_${i}`);
    ids[n - 1] = 'call_0';
    const log = answerThenResults(ids, [['call_0', 'first'], ['stray', 'stray'], ['call_1', 'one'], ['call_0', 'again']]);
    expect(toolContents(log)).toEqual(['one', 'first', 'again', 'stray']);
  });
});

describe('Projection.placedMessageOf', () => {
  it('hands back the message it placed last, not a copy, and one equal to messageOf for any other entry (#26)', () => {
    seq = 0;
    const user = e({ kind: 'user/message', turn: 't1', text: 'hi', origin: 'user', surfaceOp: 'append' });
    const answer = e({ kind: 'assistant/message', turn: 't1', step: 't1.s1', blocks: [{ type: 'text', text: 'yes' }], finish: { kind: 'ok', reason: 'stop' }, surfaceOp: 'append' });
    const p = new Projection();
    p.apply(user);
    p.apply(answer);
    if (!isVisible(user) || !isVisible(answer)) throw new Error('visible entries expected');
    expect(p.placedMessageOf(answer)).toBe(p.messages[1]);
    expect(p.placedMessageOf(user)).not.toBe(p.messages[0]);
    expect(p.placedMessageOf(user)).toEqual(messageOf(user));
  });
});
