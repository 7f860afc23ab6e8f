/** Canonical renderings of a call: what approval rules match and what the repeat-call guard compares. Pure. */

/** JSON with object keys sorted at every depth, so `{a,b}` and `{b,a}` render the same. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
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
