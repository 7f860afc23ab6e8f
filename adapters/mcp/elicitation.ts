/**
 * A server's input request (`elicitation/create`, sent as a request on a
 * 2025 connection, embedded in an `input_required` result on 2026-07-28) as
 * a bridle question, and the answer back (ADR 0065). A form bridle can show
 * is flat: string (free, or one of a list), number, integer, boolean fields.
 * Anything else — a multiple choice, a nested object, a URL to open — is
 * `unshowable`, and the session declines it without asking, saying why.
 */
import type { QuestionField, ToolAnswer, ToolQuestion } from '../../ports/tools.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** Contract: pure; the choices of a single-select string field (`enum`, or `oneOf` of `const`s), if it has them. */
function optionsOf(p: Json): string[] | undefined {
  if (Array.isArray(p.enum) && p.enum.every((v) => typeof v === 'string')) return p.enum as string[];
  if (Array.isArray(p.oneOf) && p.oneOf.every((o) => isObject(o) && typeof o.const === 'string')) return (p.oneOf as Json[]).map((o) => o.const as string);
  return undefined;
}

function fieldOf(name: string, p: unknown, required: boolean): QuestionField | string {
  if (!isObject(p)) return `the field ${name} has no schema`;
  const type = p.type;
  if (type === 'array') return `the field ${name} is a multiple choice`;
  if (type !== 'string' && type !== 'number' && type !== 'integer' && type !== 'boolean') return `the field ${name} is of type ${JSON.stringify(type) ?? 'none'}, not a plain value`;
  const f: QuestionField = { name, type, required };
  const title = str(p.title);
  const description = str(p.description);
  if (title) f.title = title;
  if (description) f.description = description;
  const options = type === 'string' ? optionsOf(p) : undefined;
  if (options) f.options = options;
  const d = p.default;
  if (typeof d === 'string' || typeof d === 'number' || typeof d === 'boolean') f.default = d;
  return f;
}

/** Contract: pure; the question an `elicitation/create`'s params ask, from the row `from`. */
export function questionOf(from: string, params: unknown): ToolQuestion {
  const p = isObject(params) ? params : {};
  const message = str(p.message) ?? '';
  if (p.mode === 'url') return { from, message, unshowable: 'it asks to open a URL' };
  const schema = p.requestedSchema;
  if (!isObject(schema) || schema.type !== 'object') return { from, message, unshowable: 'its form is not an object of fields' };
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  const fields: QuestionField[] = [];
  for (const [name, prop] of Object.entries(isObject(schema.properties) ? schema.properties : {})) {
    const f = fieldOf(name, prop, required.has(name));
    if (typeof f === 'string') return { from, message, unshowable: f };
    fields.push(f);
  }
  return { from, message, fields };
}

/** Contract: pure; the `elicitation/create` result for bridle's answer. */
export function elicitResult(a: ToolAnswer): { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string | number | boolean> } {
  if (a.action === 'accepted') return { action: 'accept', content: a.values };
  return { action: a.action === 'declined' ? 'decline' : 'cancel' };
}
