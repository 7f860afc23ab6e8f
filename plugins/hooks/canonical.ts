/** Canonical renderings of a call: what approval rules match and what the repeat-call guard compares. Pure. */
import { plainObject } from '../../log/plain-json.js';

const byKey = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Whether a plain object's keys are already in sorted order, so JSON of the object itself is JSON of its sorted copy.
 * Only a plain object (`log/plain-json.ts`): another (a boxed string, say) may render otherwise than its own keys
 * would. `for…in` walks a plain object's own keys in `Object.keys` order (nothing on its prototype is enumerable)
 * without building a list.
 */
function inOrder(v: object): boolean {
  if (!plainObject(v)) return false;
  let last: string | undefined;
  for (const k in v) {
    if (last !== undefined && !(last < k)) return false;
    last = k;
  }
  return true;
}

/** Past this depth a value is rendered through the replacer (which also throws for a cycle, as it did). */
const WALKED_DEPTH = 64;

/**
 * Whether the replacer below would hand back every value of `v` as it is: strings, numbers, booleans, null and
 * undefined, and arrays and plain objects (keys in order) of them, none with a `toJSON` (whose value the replacer is
 * given instead). Then `JSON.stringify(v)` is
 * the canonical JSON, without a call of the replacer per key. Anything else says no, and the replacer decides.
 */
function canonicalAlready(v: unknown, depth: number): boolean {
  if (v === null || v === undefined) return true;
  const t = typeof v;
  if (t === 'string' || t === 'number' || t === 'boolean') return true;
  if (t !== 'object' || depth >= WALKED_DEPTH || typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!canonicalAlready(v[i], depth + 1)) return false;
    return true;
  }
  if (!inOrder(v as object)) return false;
  for (const k in v as Record<string, unknown>) if (!canonicalAlready((v as Record<string, unknown>)[k], depth + 1)) return false;
  return true;
}

/**
 * JSON with object keys sorted at every depth, so `{a,b}` and `{b,a}` render the same. An object already in order is
 * not copied; a value in order at every depth (as most arguments are) is rendered without the replacer.
 */
export function canonicalJson(value: unknown): string {
  if (canonicalAlready(value, 0)) return JSON.stringify(value);
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) && !inOrder(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(byKey))
      : v,
  );
}

/** `a/./b/../c/` → `a/c`; `..` above a relative start is kept, above `/` dropped. */
export function normalizePath(p: string): string {
  const absolute = p.startsWith('/');
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!absolute) out.push('..');
      continue;
    }
    out.push(part);
  }
  const joined = out.join('/');
  return absolute ? `/${joined}` : joined || '.';
}

/**
 * What a rule's pattern is matched against: the command string for a call
 * with a `command` (bash), the path for one with a `path` (file tools;
 * normalized, workspace-relative when it points inside `workspace`), else the
 * key-sorted JSON of the arguments.
 */
export function renderForRules(args: unknown, workspace?: string): string {
  const a = (args ?? {}) as Record<string, unknown>;
  if (typeof a.command === 'string') return a.command;
  if (typeof a.path === 'string') {
    const p = normalizePath(a.path);
    if (workspace && p.startsWith('/')) {
      const ws = normalizePath(workspace);
      if (p === ws) return '.';
      if (p.startsWith(`${ws}/`)) return p.slice(ws.length + 1);
    }
    return p;
  }
  return canonicalJson(a);
}
