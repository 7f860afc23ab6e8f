import { describe, expect, it } from 'vitest';
import type { Draft, DraftOf, Entry, SurfaceOp } from '../log/entries.js';
import { LogBuilder } from '../test/helpers/log-builder.js';
import { isCancelEffect, scriptOf } from './script.js';

const user = (turn: string, text: string, origin: 'user' | 'steer' | 'inject' | 'summary' = 'user'): Draft => ({ kind: 'user/message', turn, text, origin, surfaceOp: 'append' });

function turnWith(middle: Draft[]): Entry[] {
  const b = new LogBuilder().add({ kind: 'turn/start', turn: 't1', input: 'go' }).add(user('t1', 'go'));
  for (const d of middle) b.add(d);
  return b.entries;
}

describe('scriptOf', () => {
  it('splits a run of steer and inject into the measuring delivery and what only the step took', () => {
    const es = turnWith([user('t1', 's1', 'steer'), user('t1', 'i1', 'inject'), user('t1', 's2', 'steer'), { kind: 'step/start', turn: 't1', step: 't1.s1' }]);
    const d = scriptOf(es).turns.get('t1')!.deliveries;
    expect(d.get('measuring:0')).toEqual([
      { text: 's1', mode: 'steer' },
      { text: 'i1', mode: 'inject' },
    ]);
    expect(d.get('stepping:1')).toEqual([{ text: 's2', mode: 'steer' }]);
  });

  it('after a compaction, input goes to the step; before one, to the measuring', () => {
    const es = turnWith([
      { kind: 'step/start', turn: 't1', step: 't1.s1' },
      { kind: 'step/end', turn: 't1', step: 't1.s1', reason: 'tool-calls' },
      user('t1', 'before', 'inject'),
      { kind: 'compaction/start', turn: 't1', trigger: 'proactive', estimatedTokens: 10, window: 100 },
      { kind: 'compaction/end', outcome: 'nothing-to-do', tokensBefore: 10, tokensAfter: 10 },
      user('t1', 'after', 'steer'),
      { kind: 'step/start', turn: 't1', step: 't1.s2' },
    ]);
    const d = scriptOf(es).turns.get('t1')!.deliveries;
    expect(d.get('measuring:1')).toEqual([{ text: 'before', mode: 'inject' }]);
    expect(d.get('stepping:2')).toEqual([{ text: 'after', mode: 'steer' }]);
  });

  it('reads decisions, answers and outputs per call; a replacement by compaction is not an output', () => {
    const b = new LogBuilder().startTurn().startStep().answer('', [{ name: 'bash' }, { name: 'write_file' }, { name: 'glob' }]);
    b.add({ kind: 'approval/asked', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', name: 'bash', reason: 'why' });
    b.add({ kind: 'approval/decided', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', outcome: 'allowed-once', by: 'me' });
    b.add({ kind: 'tool/dispatch', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', name: 'bash', idempotent: false });
    const result = (callId: string, status: 'ok' | 'denied', content: string, surfaceOp: SurfaceOp = 'append'): DraftOf<'tool/result'> => ({ kind: 'tool/result', turn: 't1', step: 't1.s1', callId, toolCallId: 'x', name: 'n', status, content, surfaceOp });
    b.add(result('t1.s1.c1', 'ok', 'ran'));
    b.add(result('t1.s1.c2', 'denied', 'Denied: the sandbox says no. The call did not run.'));
    b.add(result('t1.s1.c1', 'ok', 'ran, cut', { op: 'replace', start: 10, end: 10 }));
    const calls = scriptOf(b.entries).calls;
    expect(calls.get('t1.s1.c1')).toEqual({ decision: { kind: 'ask', reason: 'why' }, answer: { outcome: 'allowed-once', by: 'me' }, output: { status: 'ok', content: 'ran' } });
    expect(calls.get('t1.s1.c2')).toEqual({ decision: { kind: 'deny', reason: 'the sandbox says no' } });
    expect(calls.get('t1.s1.c3')).toBeUndefined();
  });

  it('knows the entries only a cancel writes', () => {
    const es = turnWith([
      { kind: 'step/start', turn: 't1', step: 't1.s1' },
      { kind: 'assistant/message', turn: 't1', step: 't1.s1', blocks: [{ type: 'text', text: 'hal' }], finish: { kind: 'aborted' }, interrupted: true, surfaceOp: 'append' },
      { kind: 'step/end', turn: 't1', step: 't1.s1', reason: 'aborted' },
      { kind: 'turn/end', turn: 't1', reason: 'aborted', steps: 1, cause: 'user' },
    ]);
    expect(es.map(isCancelEffect)).toEqual([false, false, false, false, true, true, true]);
    expect(scriptOf(es).steps.get('t1.s1')).toEqual([{ kind: 'interrupted', blocks: [{ type: 'text', text: 'hal' }] }]);
  });
});
