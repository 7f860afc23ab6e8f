/**
 * A tool's question (ADR 0065): an MCP server asks, during a call, for input
 * from the person behind the session. It is an approval of its own class,
 * as the budget's is (ADR 0047): the question is logged (`question/asked`)
 * and flushed before anyone is asked, then decided — under `never`, with
 * nobody to ask, or for a form that cannot be shown, declined without
 * asking; otherwise asked of the session's answerer (terminal, WebSocket
 * clients, ACP client) as an approval named `question` — and the decision is
 * logged (`question/decided`) before the tool hears it. Asked once: a
 * crash while it waits leaves the question open with its call, and the call
 * that asked is gone, so nothing answers it later.
 */
import type { Recorder } from '../log/recorder.js';
import type { Answerer, ApprovalAnswer, ApprovalPolicy } from '../ports/approval.js';
import type { QuestionField, QuestionValue, ToolAnswer, ToolQuestion } from '../ports/tools.js';
import { askApproval } from './ask-approval.js';

export interface ToolQuestionOptions {
  policy: ApprovalPolicy;
  answerer?: Answerer;
  answerTimeoutMs?: number;
}

export interface QuestionCall {
  turn: string;
  step: string;
  callId: string;
}

/** Contract: pure; the value as its field takes it (a terminal gives text), or why it does not fit. */
export function fieldValue(f: QuestionField, raw: QuestionValue): QuestionValue | { problem: string } {
  const text = typeof raw === 'string' ? raw.trim() : raw;
  if (f.type === 'boolean') {
    if (typeof text === 'boolean') return text;
    if (/^(y|yes|true)$/i.test(String(text))) return true;
    if (/^(n|no|false)$/i.test(String(text))) return false;
    return { problem: `${f.name} takes yes or no` };
  }
  if (f.type === 'number' || f.type === 'integer') {
    const n = typeof text === 'number' ? text : text === '' ? NaN : Number(text);
    if (!Number.isFinite(n) || (f.type === 'integer' && !Number.isInteger(n))) return { problem: `${f.name} takes ${f.type === 'integer' ? 'a whole number' : 'a number'}` };
    return n;
  }
  const s = String(raw);
  if (f.options && !f.options.includes(s)) return { problem: `${f.name} takes one of ${f.options.join(', ')}` };
  return s;
}

/** Contract: pure; the values for `fields` from an answer's (defaults where it gave none), or why a required one is missing or wrong. */
export function formValues(fields: readonly QuestionField[], given: Record<string, unknown> | undefined): { values: Record<string, QuestionValue> } | { problem: string } {
  const values: Record<string, QuestionValue> = {};
  for (const f of fields) {
    const raw = given?.[f.name];
    const v = raw === undefined || raw === '' ? f.default : raw;
    if (v === undefined) {
      if (f.required) return { problem: `no value for the required field ${f.name}` };
      continue;
    }
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') return { problem: `${f.name} is not a plain value` };
    const checked = fieldValue(f, v);
    if (typeof checked === 'object') return checked;
    values[f.name] = checked;
  }
  return { values };
}

type Decided = { outcome: 'accepted'; by: string; values: Record<string, QuestionValue> } | { outcome: 'declined'; by: string; reason: string } | { outcome: 'cancelled'; by: string };

function decide(answer: ApprovalAnswer, fields: readonly QuestionField[]): Decided {
  if (answer.outcome === 'cancelled') return { outcome: 'cancelled', by: answer.by };
  if (answer.outcome === 'rejected') return { outcome: 'declined', by: answer.by, reason: `${answer.by} declined` };
  if (answer.outcome === 'unavailable') return { outcome: 'declined', by: answer.by, reason: `nobody answered (${answer.by})` };
  const filled = formValues(fields, answer.values);
  if ('problem' in filled) return { outcome: 'declined', by: answer.by, reason: `the answer does not fill the form: ${filled.problem}` };
  return { outcome: 'accepted', by: answer.by, values: filled.values };
}

const toolAnswer = (d: Decided): ToolAnswer => (d.outcome === 'accepted' ? { action: 'accepted', values: d.values } : d.outcome === 'declined' ? { action: 'declined', reason: d.reason } : { action: 'cancelled' });

/** Contract: the returned asker never rejects; it appends two entries per question (asked, then decided) unless its signal aborts while it waits. */
export function toolQuestions(recorder: Recorder, o: ToolQuestionOptions) {
  return async (call: QuestionCall, q: ToolQuestion, signal: AbortSignal): Promise<ToolAnswer> => {
    const n = recorder.entries.filter((e) => e.kind === 'question/asked' && e.callId === call.callId).length + 1;
    const ref = { ...call, question: `${call.callId}.q${n}` };
    const shown = 'fields' in q ? { fields: [...q.fields] } : { unshowable: q.unshowable };
    recorder.append({ kind: 'question/asked', ...ref, from: q.from, message: q.message, ...shown });
    await recorder.flush().catch(() => undefined);
    let d: Decided;
    if (!('fields' in q)) d = { outcome: 'declined', by: 'unshowable form', reason: `bridle cannot show this form: ${q.unshowable}` };
    else if (o.policy === 'never') d = { outcome: 'declined', by: 'approval policy never', reason: 'the session runs under approval never: nobody is asked' };
    else if (!o.answerer) d = { outcome: 'declined', by: 'no answerer', reason: 'this session has nobody to ask' };
    else {
      const request = {
        callId: ref.question,
        name: 'question',
        arguments: JSON.stringify(Object.fromEntries(q.fields.map((f) => [f.name, f.type]))),
        reason: q.message,
        presented: `${q.from} asks: ${q.message}`,
        always: { tool: 'question', pattern: '' },
        form: { fields: q.fields },
      };
      const a = await askApproval({ answerer: o.answerer, ...(o.answerTimeoutMs !== undefined ? { timeoutMs: o.answerTimeoutMs } : {}) }, request, signal);
      // The call was cancelled while it waited: the question stays open with it.
      if (signal.aborted) return { action: 'cancelled' };
      d = decide(a, q.fields);
    }
    recorder.append({ kind: 'question/decided', ...ref, ...d });
    return toolAnswer(d);
  };
}
