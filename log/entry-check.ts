/**
 * A fast yes for log lines, derived from the entry schemas themselves.
 *
 * Reading a log validates every line; zod builds a fresh copy of each entry
 * and a result object per field, which costs more than `JSON.parse` did, and
 * most of it is garbage. Almost every line bridle reads is one bridle wrote,
 * so `compileCheck` walks a zod schema once and generates a predicate that
 * says yes only when zod would accept the value *and* give back an equal
 * value with the same keys in the same order, so the parsed value itself can
 * be kept. Anything it does not say yes to goes to zod, which stays the one
 * judge of what is wrong and says it. The schemas stay written once
 * (`log/entries.ts`); a construct this walker does not know (a transform, a
 * default, a record, a format other than a plain pattern) makes it give up on
 * that schema, never guess.
 *
 * The predicate is generated source (`new Function`, as zod itself compiles
 * its object parsers): one function per object, union and array, with the
 * keys as constants, so each property read and each call is monomorphic. On
 * freshly parsed objects that is several times faster than a tree of closures.
 */
import type { z } from 'zod';

/** True only for a value zod accepts and returns unchanged; false says nothing (ask zod). */
export type FastCheck = (v: unknown) => boolean;

type Def = Record<string, unknown> & { type: string };
type Schema = z.core.$ZodType;
class Unsupported extends Error {}

const defOf = (s: Schema) => s._zod.def as unknown as Def;
const unsupported = (what: string): never => {
  throw new Unsupported(what);
};
const isPrimitive = (v: unknown): v is string | number | boolean | null =>
  v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v) && !Object.is(v, -0));

/**
 * Contract: pure; returns undefined (use zod) for any schema holding a
 * construct it does not know, or where code cannot be generated. The
 * predicate never throws for a value `JSON.parse` returned.
 */
export function compileCheck(schema: Schema): FastCheck | undefined {
  const gen = new Generator();
  try {
    const root = gen.fn(schema);
    const names = gen.consts.map((_, i) => `c${i}`);
    return new Function(...names, `"use strict";\n${gen.out.join('\n')}\nreturn ${root};`)(...gen.consts) as FastCheck;
  } catch (err) {
    if (err instanceof Unsupported || err instanceof EvalError) return undefined;
    throw err;
  }
}

class Generator {
  readonly consts: unknown[] = [];
  readonly out: string[] = [];
  private readonly names = new Map<Schema, string>();

  private constant(v: unknown): string {
    this.consts.push(v);
    return `c${this.consts.length - 1}`;
  }

  /** A boolean expression: does `x` (an identifier) pass `s`? */
  expr(s: Schema, x: string): string {
    const d = defOf(s);
    if (d.coerce) unsupported('coerce');
    // A format (an ISO datetime, an int) is a schema and a check at once: its own def is its first check.
    const checks = [...(s._zod.traits.has('$ZodCheck') ? [d] : []), ...((d.checks as Schema[] | undefined) ?? []).map(defOf)];
    return [this.typeExpr(s, d, x), ...checks.map((c) => this.refinement(c, x))].join(' && ');
  }

  private typeExpr(s: Schema, d: Def, x: string): string {
    switch (d.type) {
      case 'string':
        return `typeof ${x} === "string"`;
      case 'number':
        return `(typeof ${x} === "number" && Number.isFinite(${x}))`;
      case 'boolean':
        return `typeof ${x} === "boolean"`;
      case 'null':
        return `${x} === null`;
      case 'unknown':
      case 'any':
        return 'true';
      case 'never':
        return 'false';
      case 'literal': {
        const values = d.values as unknown[];
        if (values.length === 1 && isPrimitive(values[0])) return `${x} === ${JSON.stringify(values[0])}`;
        return `${this.constant(new Set(values))}.has(${x})`;
      }
      case 'enum': {
        const values = Object.values(d.entries as Record<string, unknown>);
        if (!values.every((v) => typeof v === 'string')) unsupported('a numeric enum');
        return `${this.constant(new Set(values))}.has(${x})`;
      }
      case 'optional':
        return `(${x} === undefined || (${this.expr(d.innerType as Schema, x)}))`;
      case 'nullable':
        return `(${x} === null || (${this.expr(d.innerType as Schema, x)}))`;
      case 'array':
      case 'union':
      case 'object':
        return `${this.fn(s)}(${x})`;
      default:
        return unsupported(`${d.type} (${[...s._zod.traits][0] ?? '?'})`);
    }
  }

  /** The checks zod runs after the type, where each is a plain comparison or a plain pattern. */
  private refinement(c: Def, x: string): string {
    const bound = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : unsupported('a non-finite bound'));
    switch (c.check) {
      case 'greater_than':
        return `${x} ${c.inclusive ? '>=' : '>'} ${bound(c.value)}`;
      case 'less_than':
        return `${x} ${c.inclusive ? '<=' : '<'} ${bound(c.value)}`;
      case 'number_format':
        return c.format === 'safeint' ? `Number.isSafeInteger(${x})` : unsupported(`number format ${String(c.format)}`);
      case 'min_length':
        return `${x}.length >= ${bound(c.minimum)}`;
      case 'max_length':
        return `${x}.length <= ${bound(c.maximum)}`;
      case 'string_format': {
        // Only formats zod checks with their pattern alone (others, such as url, run code of their own).
        if ((c.format !== 'regex' && c.format !== 'datetime') || !(c.pattern instanceof RegExp)) return unsupported(`string format ${String(c.format)}`);
        const re = this.constant(c.pattern);
        return `(${re}.lastIndex = 0, ${re}.test(${x}))`;
      }
      default:
        return unsupported(`check ${String(c.check)}`);
    }
  }

  /** The name of a generated function checking `s` (one per schema, reused where it recurs). */
  fn(s: Schema): string {
    const known = this.names.get(s);
    if (known) return known;
    const name = `f${this.names.size}`;
    this.names.set(s, name);
    const d = defOf(s);
    const body = d.type === 'object' ? this.objectBody(d) : d.type === 'array' ? this.arrayBody(s, d) : d.type === 'union' ? this.unionBody(d) : `return ${this.expr(s, 'v')};`;
    this.out.push(`function ${name}(v) {\n${body}\n}`);
    return name;
  }

  private arrayBody(s: Schema, d: Def): string {
    const checks = [...((d.checks as Schema[] | undefined) ?? []).map(defOf)].map((c) => this.refinement(c, 'v'));
    return [
      'if (!Array.isArray(v)) return false;',
      ...(checks.length ? [`if (!(${checks.join(' && ')})) return false;`] : []),
      `for (let i = 0; i < v.length; i++) { const x = v[i]; if (!(${this.expr(d.element as Schema, 'x')})) return false; }`,
      'return true;',
    ].join('\n');
  }

  /** Any option; for an exclusive union exactly one, and for a discriminated one the option its discriminator names, as zod picks it. */
  private unionBody(d: Def): string {
    const options = d.options as Schema[];
    const disc = typeof d.discriminator === 'string' ? d.discriminator : undefined;
    const tags = disc ? options.map((o) => discriminatorOf(o, disc)) : [];
    if (disc && tags.every((t) => t !== undefined) && new Set(tags).size === tags.length) {
      const cases = options.map((o, i) => `case ${JSON.stringify(tags[i])}: return ${this.fn(o)}(v);`);
      return `if (typeof v !== "object" || v === null) return false;\nswitch (v[${JSON.stringify(disc)}]) {\n${cases.join('\n')}\ndefault: return false;\n}`;
    }
    const exprs = options.map((o) => this.expr(o, 'v'));
    if (d.inclusive !== false) return `return (${exprs.join(') || (')});`;
    return `let n = 0;\n${exprs.map((e) => `if (${e}) n++;`).join('\n')}\nreturn n === 1;`;
  }

  /**
   * A strict object whose keys come in the shape's order, optional ones
   * possibly absent: then zod's copy (built in shape order) is the same
   * value. `j` is the index of the next key allowed; a key may come only if
   * no required key lies between `j` and it. A non-strict object would drop
   * or keep unknown keys; it is not taken.
   */
  private objectBody(d: Def): string {
    const catchall = d.catchall as Schema | undefined;
    if (!catchall || defOf(catchall).type !== 'never') unsupported('a non-strict object');
    const shape = d.shape as Record<string, Schema>;
    const keys = Object.keys(shape);
    if (keys.includes('__proto__')) unsupported('a __proto__ key');
    const required = keys.map((k) => {
      const { optin, optout } = shape[k]!._zod;
      if (optin === undefined && optout === undefined) return true;
      if (optin === 'optional' && optout === 'optional') return false;
      return unsupported(`key ${k}: a default`);
    });
    const lastRequiredBefore = (i: number) => required.slice(0, i).lastIndexOf(true);
    const cases = keys.map((k, i) => {
      const r = lastRequiredBefore(i);
      const order = r < 0 ? `j > ${i}` : `j > ${i} || ${r} >= j`;
      return `case ${JSON.stringify(k)}: { if (${order}) return false; const x = v[${JSON.stringify(k)}]; if (!(${this.expr(shape[k]!, 'x')})) return false; j = ${i + 1}; break; }`;
    });
    const end = lastRequiredBefore(keys.length);
    return [
      'if (typeof v !== "object" || v === null || Array.isArray(v)) return false;',
      'let j = 0;',
      // An inherited enumerable key (a polluted prototype) only makes this say no: zod decides then.
      `for (const k in v) {\nswitch (k) {\n${cases.join('\n')}\ndefault: return false;\n}\n}`,
      `return ${end < 0 ? 'true' : `${end} < j`};`,
    ].join('\n');
  }
}

/** The single primitive literal an object option holds at its discriminator key, if it is one. */
function discriminatorOf(o: Schema, disc: string): string | number | boolean | null | undefined {
  const d = defOf(o);
  if (d.type !== 'object') return undefined;
  const tag = (d.shape as Record<string, Schema>)[disc];
  const td = tag && defOf(tag);
  if (!td || td.type !== 'literal' || (td.values as unknown[]).length !== 1) return undefined;
  const v = (td.values as unknown[])[0];
  return isPrimitive(v) ? v : undefined;
}
