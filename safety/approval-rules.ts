/**
 * Approval rules are data: a tool name and a regex over the call's canonical
 * rendering. They come from `--allow tool:pattern` flags, from config, and from
 * "always" answers (logged with the decision and rebuilt from the log on resume).
 */
import { ApprovalRule } from '../log/entries-calls.js';
import type { Entry } from '../log/entries.js';

/** Shell syntax that chains, substitutes or redirects: a broad rule must not let `git status; rm -rf ~` through. */
const COMPOUND = /[;&|`<>\n\r]|\$\(/;

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The rule an "always" answer adds by default: this tool, this exact rendering, nothing else. */
export function exactRule(tool: string, rendered: string): ApprovalRule {
  return { tool, pattern: `^${escapeRegex(rendered)}$` };
}

/** Contract: throws an `Error` naming the problem for a malformed rule or a pattern that is not a valid regex. */
export function checkRule(rule: unknown): ApprovalRule {
  const r = ApprovalRule.safeParse(rule);
  if (!r.success) throw new Error(`not an approval rule: ${JSON.stringify(rule)}`);
  try {
    new RegExp(r.data.pattern);
  } catch (err) {
    throw new Error(`approval rule for ${r.data.tool}: invalid pattern ${JSON.stringify(r.data.pattern)}: ${(err as Error).message}`);
  }
  return r.data;
}

/** `tool:pattern`, split at the first colon, e.g. `bash:^npm test$`. Contract: throws an `Error` for a malformed one. */
export function parseRule(text: string): ApprovalRule {
  const i = text.indexOf(':');
  if (i <= 0) throw new Error(`--allow wants tool:pattern, e.g. 'bash:^npm test$' (got ${JSON.stringify(text)})`);
  return checkRule({ tool: text.slice(0, i), pattern: text.slice(i + 1) });
}

/**
 * Contract: pure. A rule matches a call of its tool whose rendering the
 * pattern finds. For bash, a rule other than the exact one only applies to a
 * simple command (no `;`, `&`, `|`, backquotes, `$(`, redirections, newlines).
 */
export function ruleMatches(rule: ApprovalRule, call: { name: string; rendered: string }): boolean {
  if (rule.tool !== call.name) return false;
  if (call.name === 'bash' && COMPOUND.test(call.rendered) && rule.pattern !== exactRule(call.name, call.rendered).pattern) return false;
  try {
    return new RegExp(rule.pattern).test(call.rendered);
  } catch {
    return false;
  }
}

/** The rules "always" answers added, in the order they were logged. */
export function rulesFromLog(entries: readonly Entry[]): ApprovalRule[] {
  const out: ApprovalRule[] = [];
  for (const e of entries) if (e.kind === 'approval/decided' && e.outcome === 'allowed-always' && e.rule) out.push(e.rule);
  return out;
}
