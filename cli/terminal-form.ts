/**
 * A tool's question on the terminal (ADR 0065): who asks and what, the
 * form's fields, then — on yes — one prompt per field, an empty line taking
 * the field's default (or leaving an optional field out). The values are
 * text; the question's check (actors/tool-question.ts) reads them as the
 * fields' types and declines an answer that does not fit, saying why.
 */
import type { AnswerRequest } from '../ports/approval.js';
import type { QuestionField } from '../ports/tools.js';
import { visible } from './visible.js';

const kindOf = (f: QuestionField) => (f.options ? `one of ${f.options.map((o) => visible(o)).join(', ')}` : f.type === 'boolean' ? 'yes or no' : f.type === 'string' ? 'text' : f.type === 'integer' ? 'a whole number' : 'a number');

/** Contract: pure; one field's description for the question, and its prompt. The text holds no terminal control but `\n`. */
export function fieldLine(f: QuestionField): string {
  const about = [kindOf(f), f.required ? 'required' : 'optional', ...(f.default !== undefined ? [`default ${visible(String(f.default))}`] : [])].join(', ');
  return `${visible(f.title ?? f.name)} (${about})${f.description ? `: ${visible(f.description)}` : ''}`;
}

/** Contract: pure; the question and its form, ending with the yes/no prompt. */
export function formQuestion(req: Pick<AnswerRequest, 'presented'> & { form: NonNullable<AnswerRequest['form']> }): string {
  const fields = req.form.fields;
  return ['', `? ${visible(req.presented)}`, ...fields.map((f) => `  - ${fieldLine(f)}`), `  ${fields.length ? '[y]es (fill in the form) / [n]o' : '[y]es / [n]o'}: `].join('\n');
}

export const fieldPrompt = (f: QuestionField) => `  ${visible(f.title ?? f.name)}${f.default !== undefined ? ` [${visible(String(f.default))}]` : ''}: `;
