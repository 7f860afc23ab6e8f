/** Canonical renderings of a call: what approval rules match and what the repeat-call guard compares. Pure. */

const byKey = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Whether a plain object's keys are already in sorted order, so JSON of the object itself is JSON of its sorted copy.
 * Only a plain object: another (a boxed string, say) may render otherwise than its own keys would. `for…in` walks a
 * plain object's own keys in `Object.keys` order (nothing on its prototype is enumerable) without building a list.
 */
function inOrder(v: object): boolean {
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  let last: string | undefined;
  for (const k in v) {
    if (last !== undefined && !(last < k)) return false;
    last = k;
  }
  return true;
}

/** JSON with object keys sorted at every depth, so `{a,b}` and `{b,a}` render the same. An object already in order is not copied. */
export function canonicalJson(value: unknown): string {
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
