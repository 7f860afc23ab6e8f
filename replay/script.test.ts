import { describe, expect, it } from 'vitest';
import type { Draft, DraftOf, Entry } from '../log/entries.js';
import type { SurfaceOp } from '../log/entry-values.js';
import { LogBuilder } from '../test/helpers/log-builder.js';
import { scriptOf } from './script.js';

const user = (turn: string, text: string, origin: 'user' | 'steer' | 'inject' | 'summary' = 'user'): Draft => ({ kind: 'user/message', turn, text, origin, surfaceOp: 'append' });

function turnWith(middle: Draft[]): Entry[] {
  const b = new LogBuilder().add({ kind: 'turn/start', turn: 't1', input: 'go' }).add(user('t1', 'go'));
  for (const d of middle) b.add(d);
  return b.entries;
}

describe('scriptOf', () => {
  it('reads the pre-step verdict from what the machines wrote after turn/start, past input that arrived meanwhile', () => {
    const es = new LogBuilder()
      .add({ kind: 'session/input', mode: 'followup', text: 'go', origin: 'user' })
      .add({ kind: 'turn/start', turn: 't1', input: 'go', from: 2 })
      .add({ kind: 'session/input', mode: 'steer', text: 'late', origin: 'user' })
      .add(user('t1', 'go, rewritten')).entries;
    expect(scriptOf(es).turns.get('t1')).toEqual({ turn: 't1', preStep: { kind: 'enter', text: 'go, rewritten' } });
  });

  it('reads decisions, answers and outputs per call; a replacement by compaction is not an output', () => {
    const b = new LogBuilder().startTurn().startStep().answer('', [{ name: 'bash' }, { name: 'write_file' }, { name: 'glob' }]);
    b.add({ kind: 'approval/asked', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', name: 'bash', reason: 'why' });
    b.add({ kind: 'approval/decided', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', outcome: 'allowed-once', by: 'me' });
    b.add({ kind: 'tool/dispatch', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', name: 'bash', idempotent: false });
    const result = (callId: string, status: 'ok' | 'denied', content: string, surfaceOp: SurfaceOp = 'append'): DraftOf<'tool/result'> => ({ kind: 'tool/result', turn: 't1', step: 't1.s1', callId, toolCallId: 'x', name: 'n', status, content, surfaceOp });
    b.add(result('t1.s1.c1', 'ok', 'ran'));
    b.add({ ...result('t1.s1.c2', 'denied', 'Denied: whatever the prose says. The call did not run.'), reason: 'the sandbox says no' });
    b.add(result('t1.s1.c1', 'ok', 'ran, cut', { op: 'replace', start: 10, end: 10 }));
    const calls = scriptOf(b.entries).calls;
    expect(calls.get('t1.s1.c1')).toEqual({ decision: { kind: 'ask', reason: 'why' }, answer: { outcome: 'allowed-once', by: 'me' }, output: { status: 'ok', content: 'ran' } });
    expect(calls.get('t1.s1.c2')).toEqual({ decision: { kind: 'deny', reason: 'the sandbox says no' } });
    expect(calls.get('t1.s1.c3')).toBeUndefined();
  });

  it('an interrupted answer is the text the cancel cut', () => {
    const es = turnWith([
      { kind: 'step/start', turn: 't1', step: 't1.s1' },
      { kind: 'session/cancel', by: 'user' },
      { kind: 'assistant/message', turn: 't1', step: 't1.s1', blocks: [{ type: 'text', text: 'hal' }], finish: { kind: 'aborted' }, interrupted: true, surfaceOp: 'append' },
      { kind: 'step/end', turn: 't1', step: 't1.s1', reason: 'aborted' },
      { kind: 'turn/end', turn: 't1', reason: 'aborted', steps: 1, cause: 'user' },
    ]);
    expect(scriptOf(es).steps.get('t1.s1')).toEqual([{ kind: 'interrupted', blocks: [{ type: 'text', text: 'hal' }] }]);
  });
});
