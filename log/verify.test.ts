import { describe, expect, it } from 'vitest';
import { LogBuilder } from '../test/helpers/log-builder.js';
import type { Entry } from './entries.js';
import { verifyLog } from './verify.js';

const names = (entries: Entry[]) => verifyLog(entries).violations.map((v) => `${v.violation}@${v.seq}`);
/** Numbers the entries 1, 2, …, and moves the input links (`from`) with them. */
function reseq(entries: Entry[], shift = 0): Entry[] {
  const to = new Map(entries.map((e, i) => [e.seq, i + 1 + shift]));
  return entries.map((e, i) => ({ ...e, seq: i + 1 + shift, ...('from' in e && typeof e.from === 'number' ? { from: to.get(e.from) ?? e.from } : {}) }) as Entry);
}
const seqOf = (entries: Entry[], pred: (e: Entry) => boolean) => entries.find(pred)!.seq;

describe('verifyLog', () => {
  it('accepts a clean log and counts it', () => {
    const b = new LogBuilder().cleanTurn().add({ kind: 'checkpoint', turn: 't1', snapshot: {} }).cleanTurn('again');
    const v = verifyLog(b.entries);
    expect(v.violations).toEqual([]);
    expect(v.ok).toBe(true);
    expect(v.totals).toMatchObject({ turns: 2, steps: 4, calls: { ok: 2 }, checkpoints: 1, turnEnds: { completed: 2 } });
  });

  it('accepts a log/not-durable note and a session/takeover anywhere, inside a turn or between turns (ADR 0017)', () => {
    const takeover = { kind: 'session/takeover', ignorable: true, stale: { pid: 7, host: 'h', since: '2026-01-01T00:00:00.000Z' }, by: { pid: 8, host: 'h' } } as const;
    const b = new LogBuilder().startTurn().startStep().answer('x', [{ name: 'bash' }]).dispatch(1);
    b.add({ kind: 'log/not-durable', upTo: b.entries.at(-1)!.seq, detail: 'EIO: i/o error, fdatasync', sysCode: 'EIO' });
    b.add(takeover).result(1).endStep('tool-calls').endTurn('error');
    b.add({ kind: 'log/not-durable', upTo: b.entries.at(-1)!.seq, detail: 'EIO' }).add(takeover).cleanTurn('again');
    expect(verifyLog(b.entries).violations).toEqual([]);
    // An open tail with either kind at its end is still repairable (the open turn is what repair sees).
    const open = new LogBuilder().startTurn().startStep().answer('x', [{ name: 'bash' }]).dispatch(1).add(takeover);
    expect(verifyLog(open.entries, { allowOpenTail: true })).toMatchObject({ ok: true, open: { turn: { id: 't1' } } });
  });

  it('forged-entry: a log/not-durable note that names itself or a later seq', () => {
    const b = new LogBuilder().cleanTurn();
    const next = b.entries.at(-1)!.seq + 1;
    b.add({ kind: 'log/not-durable', upTo: next, detail: 'EIO' });
    expect(names(b.entries)).toEqual([`forged-entry@${next}`]);
  });

  it('seq-gap: a missing line', () => {
    const e = new LogBuilder().cleanTurn().entries;
    e.splice(4, 1);
    expect(names(e)).toContain(`seq-gap@6`);
  });

  it('seq-gap: a log that does not start at 1', () => {
    const e = reseq(new LogBuilder().cleanTurn().entries, 1);
    expect(names(e)).toEqual(['seq-gap@2']);
  });

  it('seq-reorder: lines out of order', () => {
    const e = new LogBuilder().cleanTurn().cleanTurn().entries;
    const [a, b] = [e[3]!, e[4]!];
    e[3] = b;
    e[4] = a;
    expect(names(e)).toContain(`seq-reorder@${a.seq}`);
  });

  it('orphan-result: a result with no call before it', () => {
    const b = new LogBuilder().startTurn().startStep().answer('x', [{ name: 'bash' }], 0);
    const e = b.result(1).call(1).dispatch(1).result(1).endStep('tool-calls').endTurn().entries;
    const v = verifyLog(e).violations;
    expect(v[0]).toMatchObject({ violation: 'orphan-result', seq: 7 });
  });

  it('forged-entry: a result for a call of another step', () => {
    const b = new LogBuilder().startTurn().startStep().answer('x', [{ name: 'bash' }]).dispatch(1).result(1).endStep('tool-calls');
    const first = b.entries.find((x) => x.kind === 'tool/result')!;
    b.startStep();
    const e = [...b.entries, { ...first, seq: b.recorder.lastSeq + 1, step: 't1.s2' } as Entry];
    expect(names(e)).toContain(`duplicate-result@${b.recorder.lastSeq + 1}`);
    // The same result while its own call is still open, but logged inside another step.
    const c = new LogBuilder().startTurn().startStep().answer('x', [{ name: 'bash' }]).dispatch(1);
    const forged = { kind: 'tool/result', seq: c.recorder.lastSeq + 1, at: '2026-01-01T00:00:00.000Z', turn: 't1', step: 't1.s9', callId: 't1.s1.c1', toolCallId: 'call_0_0', name: 'bash', status: 'ok', content: '', surfaceOp: 'append' } as Entry;
    expect(names([...c.entries, forged])).toContain(`forged-entry@${forged.seq}`);
  });

  it('forged-entry: a turn/end for a turn that is not open', () => {
    const b = new LogBuilder().cleanTurn();
    b.add({ kind: 'turn/end', turn: 't1', reason: 'completed', steps: 2 });
    expect(names(b.entries)).toEqual([`forged-entry@${b.recorder.lastSeq}`]);
  });

  it('forged-entry: a result that says the tool ran, for a call never dispatched (I5)', () => {
    const b = new LogBuilder().startTurn().startStep().answer('x', [{ name: 'bash' }]).result(1, 'ok').endStep('tool-calls').endTurn();
    expect(names(b.entries)).toEqual([`forged-entry@${seqOf(b.entries, (x) => x.kind === 'tool/result')}`]);
  });

  it('forged-entry: a tool/call the answer never asked for', () => {
    const b = new LogBuilder().startTurn().startStep().answer('x', [{ name: 'bash' }], 0);
    b.add({ kind: 'tool/call', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', toolCallId: 'call_0_0', name: 'write_file', arguments: '{}' });
    expect(names(b.entries)).toContain(`forged-entry@${b.recorder.lastSeq}`);
  });

  it('missing-result and missing-call: a step that ends with a call owed (I2)', () => {
    const b = new LogBuilder().startTurn().startStep().answer('x', [{ name: 'bash' }, { name: 'bash' }], 1).endStep('tool-calls').endTurn();
    const v = names(b.entries);
    expect(v).toContain(`missing-result@${seqOf(b.entries, (x) => x.kind === 'step/end')}`);
    expect(v).toContain(`missing-call@${seqOf(b.entries, (x) => x.kind === 'step/end')}`);
  });

  it('duplicate-result: two results for one call (I2)', () => {
    const b = new LogBuilder().startTurn().startStep().answer('x', [{ name: 'bash' }]).dispatch(1).result(1).result(1);
    expect(names(b.entries)).toContain(`duplicate-result@${b.recorder.lastSeq}`);
  });

  it('missing-turn-end: a turn begins while another is open (I3)', () => {
    const e = new LogBuilder().cleanTurn().cleanTurn().entries.filter((x, i, all) => !(x.kind === 'turn/end' && i < all.length - 1));
    const v = verifyLog(reseq(e)).violations;
    expect(v.map((x) => x.violation)).toEqual(['missing-turn-end']);
  });

  it('open-turn: the log stops mid-turn (strict), or the open end is described (allowOpenTail)', () => {
    const b = new LogBuilder().startTurn().startStep().answer('x', [{ name: 'bash' }, { name: 'read_file' }]).dispatch(1, true);
    expect(names(b.entries)).toEqual(['open-turn@3']);
    const v = verifyLog(b.entries, { allowOpenTail: true });
    expect(v.ok).toBe(true);
    expect(v.open).toMatchObject({
      turn: { id: 't1', steps: 1 },
      step: { id: 't1.s1' },
      calls: [
        { callId: 't1.s1.c1', dispatched: true, idempotent: true },
        { callId: 't1.s1.c2', dispatched: false },
      ],
      unloggedCalls: [],
    });
  });

  it('unmatched-compaction: an end with no start, a start that never ends', () => {
    const b = new LogBuilder().cleanTurn();
    b.add({ kind: 'compaction/end', outcome: 'compacted', tokensBefore: 10, tokensAfter: 5 });
    expect(names(b.entries)).toEqual([`unmatched-compaction@${b.recorder.lastSeq}`]);
    const c = new LogBuilder().cleanTurn();
    c.add({ kind: 'compaction/start', trigger: 'manual', estimatedTokens: 10, window: 100 });
    expect(names(c.entries)).toEqual([`unmatched-compaction@${c.recorder.lastSeq}`]);
  });

  it('bad-replace: a replace citing a non-visible entry, a shadowed one, or splitting a call from its result', () => {
    const base = () => new LogBuilder().cleanTurn();
    const replace = (b: LogBuilder, start: number, end: number) =>
      b.add({ kind: 'user/message', turn: b.turn, text: 'summary', origin: 'summary', surfaceOp: { op: 'replace', start, end } });
    // step/start (seq 5) is not model-visible.
    const a = base().startTurn('next');
    expect(names(replace(a, 5, 6).entries)).toContain(`bad-replace@${a.recorder.lastSeq}`);
    // A fine replace: the whole first turn's visible span (user message 4 .. final answer).
    const ok = base().startTurn('next');
    const last = ok.entries.filter((x) => x.kind === 'assistant/message').at(-1)!.seq;
    expect(names(replace(ok, 4, last).entries).filter((n) => n.startsWith('bad-replace'))).toEqual([]);
    // Citing an entry that replace shadowed, on its own: already shadowed. (Citing the whole span
    // again is a nested summary that takes in the first one: allowed, ADR 0005.)
    expect(names(replace(ok, last, last).entries)).toContain(`bad-replace@${ok.recorder.lastSeq}`);
    // The answer with the call, but not the result after it.
    const split = base().startTurn('next');
    const answer = seqOf(split.entries, (x) => x.kind === 'assistant/message');
    expect(names(replace(split, 4, answer).entries)).toContain(`bad-replace@${split.recorder.lastSeq}`);
  });

  it('bad-input-link: a turn or a steer that names no input, an input taken twice, another mode, other text (ADR 0021)', () => {
    const links = (b: LogBuilder) => names(b.entries).filter((n) => n.startsWith('bad-input-link'));
    const clean = new LogBuilder().cleanTurn();
    const steer = clean.recorder.append({ kind: 'session/input', mode: 'steer', text: 'also this', origin: 'user' }).seq;
    clean.startTurn('next').add({ kind: 'user/message', turn: 't2', text: 'also this', origin: 'steer', from: steer, surfaceOp: 'append' });
    expect(links(clean)).toEqual([]);
    const unnamed = new LogBuilder().add({ kind: 'turn/start', turn: 't1', input: 'go' });
    expect(links(unnamed)).toEqual(['bad-input-link@2']);
    const twice = new LogBuilder().startTurn('go');
    twice.add({ kind: 'user/message', turn: 't1', text: 'go', origin: 'steer', from: 2, surfaceOp: 'append' });
    expect(links(twice)).toEqual([`bad-input-link@${twice.recorder.lastSeq}`]);
    const mode = new LogBuilder().startTurn('go');
    const inj = mode.recorder.append({ kind: 'session/input', mode: 'inject', text: 'ctx', origin: 'system' }).seq;
    mode.add({ kind: 'user/message', turn: 't1', text: 'ctx', origin: 'steer', from: inj, surfaceOp: 'append' });
    expect(links(mode)).toEqual([`bad-input-link@${mode.recorder.lastSeq}`]);
    const text = new LogBuilder();
    const f = text.recorder.append({ kind: 'session/input', mode: 'followup', text: 'asked', origin: 'user' }).seq;
    text.add({ kind: 'turn/start', turn: 't1', input: 'forged', from: f });
    expect(links(text)).toEqual([`bad-input-link@${text.recorder.lastSeq}`]);
    // A format 1 log logs no inputs: an input entry in one is forged.
    const old = new LogBuilder();
    const e = old.entries.map((x) => (x.kind === 'session/start' ? ({ ...x, format: 1 } as Entry) : x));
    e.push({ seq: 2, at: e[0]!.at, kind: 'session/input', mode: 'followup', text: 'x', origin: 'user' });
    expect(names(e)).toEqual(['forged-entry@2']);
  });

  it('misplaced-checkpoint: inside a turn, or twice for one turn', () => {
    const b = new LogBuilder().startTurn();
    b.add({ kind: 'checkpoint', turn: 't1', snapshot: {} });
    expect(names(b.entries)).toContain(`misplaced-checkpoint@${b.recorder.lastSeq}`);
    const c = new LogBuilder().cleanTurn().add({ kind: 'checkpoint', turn: 't1', snapshot: {} }).add({ kind: 'checkpoint', turn: 't1', snapshot: {} });
    expect(names(c.entries)).toEqual([`misplaced-checkpoint@${c.recorder.lastSeq}`]);
  });

  it('bad ids and step counts', () => {
    const b = new LogBuilder().cleanTurn();
    const e = b.entries.map((x) => (x.kind === 'turn/end' ? ({ ...x, steps: 5 } as Entry) : x));
    expect(names(e)).toEqual([`turn-step-count@${seqOf(e, (x) => x.kind === 'turn/end')}`]);
  });

  it('runs the injected checkpoint check only on an otherwise clean log', () => {
    const b = new LogBuilder().cleanTurn().add({ kind: 'checkpoint', turn: 't1', snapshot: {} });
    const check = () => [{ violation: 'checkpoint-mismatch', seq: 1, message: 'x' }];
    expect(verifyLog(b.entries, { checkpoints: check }).violations.map((v) => v.violation)).toEqual(['checkpoint-mismatch']);
  });
});
