/**
 * A tool's question as an approval class (ADR 0065): logged before anyone is
 * asked, decided once, declined without asking under `never`, with nobody to
 * ask, or for a form that cannot be shown; an answer is checked against the
 * form. And `verifyLog` takes the entries only inside a running call.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../adapters/store/memory.js';
import { Recorder } from '../log/recorder.js';
import { verifyLog } from '../log/verify.js';
import { planRepair } from '../log/repair.js';
import { LogBuilder } from '../test/helpers/log-builder.js';
import type { AnswerRequest, Answerer } from '../ports/approval.js';
import type { QuestionField, ToolQuestion } from '../ports/tools.js';
import { formValues, toolQuestions } from './tool-question.js';

const call = { turn: 't1', step: 't1.s1', callId: 't1.s1.c1' };
const fields: QuestionField[] = [
  { name: 'confirm', type: 'boolean', required: true },
  { name: 'count', type: 'integer', required: false, default: 2 },
  { name: 'env', type: 'string', required: false, options: ['prod', 'staging'] },
];
const form: ToolQuestion = { from: 'mcp:fx', message: 'Deploy?', fields };

function recorder() {
  const r = new Recorder(createMemoryStore(), () => 0);
  r.append({ kind: 'session/start', id: 's', cwd: '/w', model: 'm', depth: 0, parent: null, format: 2 });
  return r;
}
const kinds = (r: Recorder) => r.entries.slice(1).map((e) => ('outcome' in e ? `${e.kind} ${String(e.outcome)}` : e.kind));
const signal = () => new AbortController().signal;

describe('a tool\'s question', () => {
  it('is asked of the answerer as an approval named question, with its form, and the values are logged and handed back', async () => {
    const r = recorder();
    const seen: AnswerRequest[] = [];
    const answerer: Answerer = async (req) => (seen.push(req), { outcome: 'allowed-once', by: 'terminal', values: { confirm: 'yes', env: 'prod' } });
    const answer = await toolQuestions(r, { policy: 'ask', answerer })(call, form, signal());
    expect(answer).toEqual({ action: 'accepted', values: { confirm: true, count: 2, env: 'prod' } });
    expect(seen[0]).toMatchObject({ callId: 't1.s1.c1.q1', name: 'question', reason: 'Deploy?', presented: 'mcp:fx asks: Deploy?', form: { fields } });
    expect(r.entries.slice(1)).toMatchObject([
      { kind: 'question/asked', question: 't1.s1.c1.q1', from: 'mcp:fx', message: 'Deploy?', fields },
      { kind: 'question/decided', question: 't1.s1.c1.q1', outcome: 'accepted', by: 'terminal', values: { confirm: true, count: 2, env: 'prod' } },
    ]);
  });

  it('is declined without asking under never, with nobody to ask, and for a form bridle cannot show; each logged with its reason', async () => {
    let asked = 0;
    const answerer: Answerer = async () => (asked++, { outcome: 'allowed-once', by: 'terminal' });
    const r = recorder();
    expect(await toolQuestions(r, { policy: 'never', answerer })(call, form, signal())).toEqual({ action: 'declined', reason: expect.stringMatching(/approval never/) });
    expect(await toolQuestions(r, { policy: 'ask' })(call, form, signal())).toEqual({ action: 'declined', reason: 'this session has nobody to ask' });
    const unshowable: ToolQuestion = { from: 'mcp:fx', message: 'Fish?', unshowable: 'the field fish is a multiple choice' };
    expect(await toolQuestions(r, { policy: 'ask', answerer })(call, unshowable, signal())).toEqual({ action: 'declined', reason: 'bridle cannot show this form: the field fish is a multiple choice' });
    expect(asked).toBe(0);
    expect(r.entries.filter((e) => e.kind === 'question/decided').map((e) => [e.question, e.by])).toEqual([
      ['t1.s1.c1.q1', 'approval policy never'],
      ['t1.s1.c1.q2', 'no answerer'],
      ['t1.s1.c1.q3', 'unshowable form'],
    ]);
  });

  it('a yes that leaves a required field without a value, a no, and a wrong value are declines', async () => {
    const r = recorder();
    const answers = [{ outcome: 'allowed-once' as const, by: 'acp' }, { outcome: 'rejected' as const, by: 'ws:a' }, { outcome: 'allowed-once' as const, by: 'ws:a', values: { confirm: true, env: 'moon' } }];
    const ask = toolQuestions(r, { policy: 'auto', answerer: async () => answers.shift()! });
    expect(await ask(call, form, signal())).toEqual({ action: 'declined', reason: 'the answer does not fill the form: no value for the required field confirm' });
    expect(await ask(call, form, signal())).toEqual({ action: 'declined', reason: 'ws:a declined' });
    expect(await ask(call, form, signal())).toEqual({ action: 'declined', reason: 'the answer does not fill the form: env takes one of prod, staging' });
  });

  it('a plain yes or no (no fields) is accepted with no values', async () => {
    const r = recorder();
    const ask = toolQuestions(r, { policy: 'ask', answerer: async () => ({ outcome: 'allowed-once', by: 'acp' }) });
    expect(await ask(call, { from: 'mcp:fx', message: 'Go on?', fields: [] }, signal())).toEqual({ action: 'accepted', values: {} });
  });

  it('a call cancelled while it waits leaves the question open, undecided', async () => {
    const r = recorder();
    const stop = new AbortController();
    const pending = toolQuestions(r, { policy: 'ask', answerer: () => new Promise(() => undefined) })(call, form, stop.signal);
    await new Promise((resolve) => setImmediate(resolve));
    stop.abort();
    expect(await pending).toEqual({ action: 'cancelled' });
    expect(kinds(r)).toEqual(['question/asked']);
  });

  it('formValues takes a terminal\'s text for numbers and yes/no', () => {
    expect(formValues(fields, { confirm: 'n', count: '7' })).toEqual({ values: { confirm: false, count: 7 } });
    expect(formValues(fields, { confirm: 'y', count: '7.5' })).toEqual({ problem: 'count takes a whole number' });
  });
});

describe('verifyLog and a tool\'s questions', () => {
  const running = () => new LogBuilder().startTurn().startStep().answer('x', [{ name: 'mcp__fx__deploy' }]).dispatch(1);
  const asked = (n: number) => ({ kind: 'question/asked', ...call, question: `t1.s1.c1.q${n}`, from: 'mcp:fx', message: 'Deploy?', fields: [] as [] }) as const;
  const decided = (n: number) => ({ kind: 'question/decided', ...call, question: `t1.s1.c1.q${n}`, outcome: 'declined', by: 'approval policy never', reason: 'never' }) as const;

  it('accepts questions asked and decided while the call runs, and one left open by its result', () => {
    const b = running().add(asked(1)).add(decided(1)).add(asked(2)).result(1).endStep('tool-calls').endTurn('error');
    expect(verifyLog(b.entries).violations).toEqual([]);
  });

  it('flags a question out of order, a decision answered twice, and a question after the call\'s result', () => {
    const v = (b: LogBuilder) => verifyLog(b.entries, { allowOpenTail: true }).violations.map((x) => x.message);
    expect(v(running().add(asked(2)))).toEqual([expect.stringMatching(/question 1 of t1.s1.c1 is t1.s1.c1.q1/)]);
    expect(v(running().add(asked(1)).add(decided(1)).add(decided(1)))).toEqual([expect.stringMatching(/not open/)]);
    expect(v(running().result(1).add(asked(1)))).toEqual([expect.stringMatching(/not running \(it has its result\)/)]);
  });

  it('a crash while a question waits: repair closes its call (outcome unknown) and appends no answer; the repaired log verifies', () => {
    const b = running().add(asked(1));
    const p = planRepair(b.entries);
    if (!p.ok) throw new Error(JSON.stringify(p.violations));
    expect(p.drafts.some((d) => d.kind === 'question/decided')).toBe(false);
    expect(p.drafts.find((d) => d.kind === 'tool/result')).toMatchObject({ callId: 't1.s1.c1', status: 'unknown' });
    for (const d of p.drafts) b.add(d);
    expect(verifyLog(b.entries).violations).toEqual([]);
  });
});
