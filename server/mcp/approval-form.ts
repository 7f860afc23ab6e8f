/**
 * A bridle approval as an MCP form-mode elicitation, and the caller's answer
 * back (ADR 0075). The form: approve or deny, and an optional reason; the
 * message shows the call as its presenter renders it, the policy's reason,
 * and the change for an edit or a write (tools/diff.ts) or else the
 * arguments. A tool's own question (an MCP server bridle uses asked it, ADR
 * 0065) is forwarded with its fields instead. The answer is untrusted: only
 * an accepted form whose decision is exactly `approve` allows; anything else
 * denies, and a decline or a cancel says so in who answered.
 */
import type { ElicitRequestFormParams, InputResponseView } from '@modelcontextprotocol/server';
import type { AnswerRequest, ApprovalAnswer } from '../../ports/approval.js';
import type { QuestionField, QuestionValue } from '../../ports/tools.js';
import { changeOf, type Change } from '../../tools/diff.js';
import { parseArgs } from '../approvals.js';

/** The longest message and reason carried; a longer one is cut, saying so. */
const MAX_MESSAGE = 16_384;
const MAX_REASON = 500;

// Text the model wrote reaches the caller's screen: no control characters but newline and tab.
const plain = (s: string) => s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
const cut = (s: string, max: number) => (s.length > max ? `${s.slice(0, max)}\n… (${s.length - max} more characters)` : s);

function changeLines(c: Change): string[] {
  return [`${c.tool === 'edit_file' ? 'edit' : 'write'} ${c.path}:`, ...(c.lines.length ? c.lines.map((l) => `${l.op} ${l.text}`) : ['(no lines)'])];
}

function argumentLines(raw: string): string[] {
  const args = parseArgs(raw);
  if (!args || typeof args !== 'object' || Array.isArray(args)) return [`arguments: ${raw}`];
  return Object.entries(args).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
}

/** Contract: pure; the message a caller reads before it answers. */
export function approvalMessage(q: Pick<AnswerRequest, 'name' | 'arguments' | 'presented' | 'reason'>): string {
  const change = changeOf(q.name, parseArgs(q.arguments));
  const lines = [`bridle asks to run: ${q.presented}`, ...(q.reason ? [`why it asks: ${q.reason}`] : []), '', ...(change ? changeLines(change) : argumentLines(q.arguments))];
  return cut(plain(lines.join('\n')), MAX_MESSAGE);
}

type Property = ElicitRequestFormParams['requestedSchema']['properties'][string];

function propertyOf(f: QuestionField): Property {
  const common = { ...(f.title ? { title: f.title } : {}), ...(f.description ? { description: f.description } : {}) };
  if (f.type === 'boolean') return { type: 'boolean', ...common, ...(typeof f.default === 'boolean' ? { default: f.default } : {}) };
  if (f.type === 'string') return { type: 'string', ...common, ...(f.options ? { enum: f.options } : {}), ...(typeof f.default === 'string' ? { default: f.default } : {}) };
  return { type: f.type, ...common, ...(typeof f.default === 'number' ? { default: f.default } : {}) };
}

/** Contract: pure; the form-mode elicitation a question becomes. */
export function approvalElicitation(q: Omit<AnswerRequest, 'signal' | 'always'>): ElicitRequestFormParams {
  if (q.form) {
    const fields = q.form.fields;
    return {
      mode: 'form',
      message: cut(plain(q.presented), MAX_MESSAGE),
      requestedSchema: { type: 'object', properties: Object.fromEntries(fields.map((f) => [f.name, propertyOf(f)])), required: fields.filter((f) => f.required).map((f) => f.name) },
    };
  }
  return {
    mode: 'form',
    message: approvalMessage(q),
    requestedSchema: {
      type: 'object',
      properties: {
        decision: { type: 'string', title: 'Decision', description: 'approve runs this call once; deny refuses it', enum: ['approve', 'deny'] },
        reason: { type: 'string', title: 'Reason', description: 'optional: why (kept in the log)', maxLength: MAX_REASON },
      },
      required: ['decision'],
    },
  };
}

function valuesOf(content: Record<string, unknown>, fields: readonly QuestionField[]): Record<string, QuestionValue> {
  const out: Record<string, QuestionValue> = {};
  for (const f of fields) {
    const v = content[f.name];
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[f.name] = v;
  }
  return out;
}

/**
 * Contract: pure, total over any response. `by` names the caller (`mcp:<client>`). An approval: `allowed-once`
 * only for an accepted form whose `decision` is `approve`; else `rejected`, the reason (the caller's, or that it
 * declined, cancelled or did not answer) in `by`. A tool's question: accepted with its values, else rejected.
 */
export function answerOfResponse(view: InputResponseView, by: string, form?: AnswerRequest['form']): ApprovalAnswer {
  if (view.kind !== 'elicit') return { outcome: 'rejected', by: `${by} (no answer in the retried call)` };
  if (view.action !== 'accept') return { outcome: 'rejected', by: `${by} (${view.action === 'decline' ? 'declined' : 'cancelled'} the question)` };
  const content = view.content ?? {};
  if (form) return { outcome: 'allowed-once', by, values: valuesOf(content, form.fields) };
  const reason = typeof content.reason === 'string' && content.reason.trim() ? `: ${plain(content.reason.trim()).slice(0, MAX_REASON)}` : '';
  return content.decision === 'approve' ? { outcome: 'allowed-once', by: `${by}${reason}` } : { outcome: 'rejected', by: `${by} (denied)${reason}` };
}
