/** The verifier's compaction cases (log/verify.ts, log/verify-surface.ts): prunes and nested summaries verify clean; misplaced ones do not. */
import { describe, expect, it } from 'vitest';
import { deriveMessages } from '../derive-messages.js';
import { verifyLog } from '../verify.js';
import { LogBuilder, pairingProblems } from './testing.js';

function turnWithSteps(n: number) {
  const b = new LogBuilder();
  b.add({ kind: 'session/start', id: 's', cwd: '/', model: 'm', depth: 0, parent: null, format: 1 });
  b.add({ kind: 'turn/start', turn: 't1', input: 'go' });
  b.user('t1', 'go');
  for (let i = 1; i <= n; i++) b.step('t1', i, { calls: [{ name: 'read_file', result: `x${i}` }] });
  const res = (c: string) => b.entries.find((e) => e.kind === 'tool/result' && e.callId === c)!.seq;
  const ans = (s: string) => b.entries.find((e) => e.kind === 'assistant/message' && e.step === s)!.seq;
  return { b, res, ans };
}

const names = (b: LogBuilder) => verifyLog(b.entries).violations.map((v) => v.violation);

describe('verifying compaction', () => {
  it('a prune, a summary in a turn, and a nested summary between turns verify clean', () => {
    const { b, res, ans } = turnWithSteps(4);
    b.add({ kind: 'compaction/start', turn: 't1', trigger: 'proactive', estimatedTokens: 10, window: 100 });
    b.add({ kind: 'tool/result', turn: 't1', step: 't1.s2', callId: 't1.s2.c1', toolCallId: 't1.s2-0', name: 'read_file', status: 'ok', content: 'pruned', surfaceOp: { op: 'replace', start: res('t1.s2.c1'), end: res('t1.s2.c1') } });
    b.add({ kind: 'compaction/summary', start: ans('t1.s1'), end: res('t1.s2.c1'), text: 'S' });
    b.add({ kind: 'user/message', turn: 't1', text: 'S', origin: 'summary', surfaceOp: { op: 'replace', start: ans('t1.s1'), end: res('t1.s2.c1') } });
    b.add({ kind: 'compaction/end', outcome: 'compacted', tokensBefore: 10, tokensAfter: 5 });
    b.add({ kind: 'turn/end', turn: 't1', reason: 'completed', steps: 4 });
    b.add({ kind: 'compaction/start', trigger: 'manual', estimatedTokens: 10, window: 100 });
    b.add({ kind: 'user/message', turn: 't1', text: 'S2', origin: 'summary', surfaceOp: { op: 'replace', start: ans('t1.s1'), end: res('t1.s3.c1') } });
    b.add({ kind: 'compaction/end', outcome: 'compacted', tokensBefore: 10, tokensAfter: 5 });
    expect(verifyLog(b.entries).violations).toEqual([]);
    const m = deriveMessages(b.entries);
    expect(m.map((x) => x.role)).toEqual(['user', 'user', 'assistant', 'tool']);
    expect(pairingProblems(m)).toEqual([]);
  });

  it('flags a replacing result outside a bracket, and a summary that cuts a call from its pruned result', () => {
    const { b, res } = turnWithSteps(2);
    b.add({ kind: 'tool/result', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', toolCallId: 't1.s1-0', name: 'read_file', status: 'ok', content: 'p', surfaceOp: { op: 'replace', start: res('t1.s1.c1'), end: res('t1.s1.c1') } });
    expect(names(b)).toContain('bad-replace');

    const t = turnWithSteps(2);
    t.b.add({ kind: 'compaction/start', turn: 't1', trigger: 'proactive', estimatedTokens: 10, window: 100 });
    t.b.add({ kind: 'tool/result', turn: 't1', step: 't1.s2', callId: 't1.s2.c1', toolCallId: 't1.s2-0', name: 'read_file', status: 'ok', content: 'p', surfaceOp: { op: 'replace', start: t.res('t1.s2.c1'), end: t.res('t1.s2.c1') } });
    // Up to the answer of s2 but not its (pruned) result.
    t.b.add({ kind: 'user/message', turn: 't1', text: 'S', origin: 'summary', surfaceOp: { op: 'replace', start: t.ans('t1.s1'), end: t.ans('t1.s2') } });
    t.b.add({ kind: 'compaction/end', outcome: 'compacted', tokensBefore: 10, tokensAfter: 5 });
    expect(verifyLog(t.b.entries).violations.map((v) => v.message).join('\n')).toMatch(/shadows the tool calls of t1\.s2 but not their results/);
  });
});
