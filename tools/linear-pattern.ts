/**
 * Which `pattern`s of a plain JSON Schema bridle checks itself. JavaScript's
 * regex engine backtracks, a check runs on the main thread and cannot be
 * interrupted, and a schema from an MCP server is someone else's text:
 * `^(a+)+$` against 30 `a`s and a `!` holds the event loop ~30 s, and every
 * session of a `serve` with it (issue 20, item 8). So a pattern is checked
 * only when its cost is provably linear in the argument's length; any other
 * is left out of bridle's check (the wire form keeps it, so the model still
 * reads it, and the server checks its own input). ADR 0039.
 *
 * Linear here means, conservatively: anchored at the start (`^`, so the
 * engine tries one position: an unanchored `a+b` is quadratic), at most one
 * quantifier whose count varies (`*`, `+`, `?`, `{n,}`, `{n,m}`), no
 * alternation, no back-reference, no lookaround. With one varying quantifier
 * over a fixed-length atom, backtracking gives back at most one character
 * per step, each step trying a fixed-length rest: O(length × pattern).
 */

/** Patterns longer than this are not analysed: a fixed rest that long is no schema's intent. */
const MAX_PATTERN = 1000;
/** An exact `{n}` above this multiplies each backtracking step past what "fixed" means. */
const MAX_EXACT = 1000;

/** Contract: pure, never throws; true only for a pattern whose test is linear in the input's length. */
export function isLinearPattern(pattern: string): boolean {
  if (pattern.length > MAX_PATTERN || !pattern.startsWith('^')) return false;
  try {
    new RegExp(pattern, 'u');
  } catch {
    // What `u` refuses is parsed by the engine in ways this reading does not follow.
    return false;
  }
  let varying = 0;
  let inClass = false;
  // Whether the character before is an unescaped `(`: then a `?` opens a group's kind, not a quantifier.
  let afterOpen = false;
  for (let i = 1; i < pattern.length; i++) {
    const c = pattern[i]!;
    const opened = afterOpen;
    afterOpen = !inClass && c === '(';
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      // \1…\9 and \k<name> refer back; everything else escaped is one character or one class.
      if (!inClass && (/[1-9]/.test(next) || next === 'k')) return false;
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '|') return false;
    else if (c === '(' && pattern[i + 1] === '?' && /[=!<]/.test(pattern[i + 2] ?? '') && !/^\?<[A-Za-z_$]/.test(pattern.slice(i + 1, i + 4))) return false;
    else if (c === '*' || c === '+' || (c === '?' && !opened)) {
      varying++;
      // A lazy or (unsupported) possessive marker after a quantifier is part of it.
      if (pattern[i + 1] === '?') i++;
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
      if (!m) continue;
      const exact = m[2] === undefined || m[3] === m[1];
      if (!exact) varying++;
      else if (Number(m[1]) > MAX_EXACT) return false;
      i += m[0].length - 1;
      if (pattern[i + 1] === '?') i++;
    }
    if (varying > 1) return false;
  }
  return true;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const ONE = ['additionalProperties', 'items', 'contains', 'propertyNames', 'not', 'if', 'then', 'else', 'additionalItems', 'unevaluatedProperties', 'unevaluatedItems'];
const MANY = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
const MAP = ['properties', '$defs', 'definitions', 'dependentSchemas'];

/**
 * Contract: pure, never throws; `schema` as bridle checks it — every `pattern` that
 * is not provably linear left out, and a `patternProperties` with such a key left out
 * with its object's `additionalProperties` (the check is looser than the server's,
 * never stricter). Only keyword positions are read: `const`, `default`, `enum`
 * and `examples` are values, kept as they are.
 */
export function checkableSchema(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const out: Json = { ...schema };
  if (typeof out.pattern === 'string' && !isLinearPattern(out.pattern)) delete out.pattern;
  for (const k of ONE) if (isObject(out[k])) out[k] = checkableSchema(out[k]);
  for (const k of MANY) if (Array.isArray(out[k])) out[k] = (out[k] as unknown[]).map(checkableSchema);
  for (const k of MAP) if (isObject(out[k])) out[k] = Object.fromEntries(Object.entries(out[k] as Json).map(([n, s]) => [n, checkableSchema(s)]));
  if (isObject(out.patternProperties)) {
    const pp = out.patternProperties as Json;
    if (Object.keys(pp).every(isLinearPattern)) out.patternProperties = Object.fromEntries(Object.entries(pp).map(([n, s]) => [n, checkableSchema(s)]));
    else {
      delete out.patternProperties;
      delete out.additionalProperties;
    }
  }
  return out;
}
