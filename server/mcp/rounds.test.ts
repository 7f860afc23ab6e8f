/**
 * The rounds of a `bridle_run` that asks its caller (ADR 0075), with a
 * stand-in run: a question ends the round, the retry's answer reaches the
 * run once, two questions at once are asked one after the other, a round's
 * cancel and an unanswered question cancel the run.
 */
import { describe, expect, it } from 'vitest';
import type { AnswerRequest, ApprovalAnswer } from '../../ports/approval.js';
import { RoundCancel, Rounds, type RoundHooks } from './rounds.js';

const question = (callId: string): AnswerRequest => ({ callId, name: 'write_file', arguments: '{}', reason: 'writes', presented: `write ${callId}`, always: { tool: 'write_file', pattern: '.*' }, signal: new AbortController().signal });
const yes = (): ApprovalAnswer => ({ outcome: 'allowed-once', by: 'mcp:t' });
const never = new AbortController().signal;

function rounds(waitMs = 60_000) {
  let n = 0;
  return new Rounds<string[]>({ newId: () => `r${++n}`, waitMs });
}

/** A run that asks each of `calls` (all at once when `together`) and ends with the answers' outcomes, or `cancelled` when its signal aborts. */
const asking = (calls: string[], together = false) => async (h: RoundHooks) => {
  const ask = (c: string) => h.answerer({ ...question(c), signal: h.signal }).then((a) => `${c}:${a.outcome}`);
  if (together) return Promise.all(calls.map(ask));
  const out: string[] = [];
  for (const c of calls) out.push(await ask(c));
  return out;
};

describe('rounds', () => {
  it('a run with no question ends in its first round', async () => {
    expect(await rounds().begin(async () => ['done'], never)).toEqual({ kind: 'done', result: ['done'] });
  });

  it('each question ends a round; the retry answers it once, then the run goes on to its next question or its end', async () => {
    const r = rounds();
    const first = await r.begin(asking(['c1', 'c2']), never);
    expect(first).toMatchObject({ kind: 'asking', ref: { run: 'r1', seq: 1 }, question: { callId: 'c1' } });
    if (first.kind !== 'asking') throw new Error('not asking');
    const second = await r.resume(first.ref, yes, never);
    expect(second).toMatchObject({ kind: 'asking', ref: { run: 'r1', seq: 2 }, question: { callId: 'c2' } });
    expect(r.resume(first.ref, yes, never)).toBeUndefined();
    if (second?.kind !== 'asking') throw new Error('not asking');
    expect(await r.resume(second.ref, () => ({ outcome: 'rejected', by: 'mcp:t' }), never)).toEqual({ kind: 'done', result: ['c1:allowed-once', 'c2:rejected'] });
    expect(r.size).toBe(0);
    expect(r.resume(second.ref, yes, never)).toBeUndefined();
  });

  it('two questions at once are asked one after the other, each answered', async () => {
    const r = rounds();
    const a = await r.begin(asking(['c1', 'c2'], true), never);
    if (a.kind !== 'asking') throw new Error('not asking');
    const b = await r.resume(a.ref, yes, never);
    expect(b).toMatchObject({ kind: 'asking', question: { callId: 'c2' } });
    if (b?.kind !== 'asking') throw new Error('not asking');
    expect(await r.resume(b.ref, yes, never)).toEqual({ kind: 'done', result: ['c1:allowed-once', 'c2:allowed-once'] });
  });

  it("a round's cancel cancels the run, by the client", async () => {
    const r = rounds();
    let reason: unknown;
    const stop = new AbortController();
    const step = r.begin(async (h) => {
      await new Promise((resolve) => h.signal.addEventListener('abort', resolve));
      reason = h.signal.reason;
      return ['cancelled'];
    }, stop.signal);
    stop.abort();
    expect(await step).toEqual({ kind: 'done', result: ['cancelled'] });
    expect(reason).toBeInstanceOf(RoundCancel);
    expect((reason as Error).message).toBe('mcp client');
  });

  it('a question nobody answers in time cancels the run and leaves the rounds', async () => {
    const r = rounds(20);
    const a = await r.begin(asking(['c1']), never);
    expect(a.kind).toBe('asking');
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(r.size).toBe(0);
    if (a.kind === 'asking') expect(r.resume(a.ref, yes, never)).toBeUndefined();
  });

  it('a run that cannot start rejects the round', async () => {
    await expect(rounds().begin(async () => Promise.reject(new Error('SESSION_LOCKED')), never)).rejects.toThrow('SESSION_LOCKED');
  });
});
