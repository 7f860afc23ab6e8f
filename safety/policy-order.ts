/**
 * The one place that says which session policy is wider than another
 * (ADR 0027). A policy is four dimensions, each ordered from narrow to wide:
 *
 *   approval  never < ask < auto          (fewer calls wait for a person)
 *   sandbox   a confining provider < off  (two different confining providers: a change is a widening)
 *   mode      read-only < workspace-write < full
 *   network   false < true
 *   allow     a set of rules: a rule added widens, a rule dropped narrows (a change can do both)
 *
 * A sandbox that confines nothing is logged as it acts (`mode: 'full'`,
 * `network: true`), so `bwrap` → `off` widens the mode and the network too.
 */
import type { SessionPolicy } from '../log/entries-session.js';

export type PolicyKey = keyof SessionPolicy;

export interface PolicyChange {
  key: PolicyKey;
  from: string;
  to: string;
}

const APPROVAL = ['never', 'ask', 'auto'] as const;
const MODE = ['read-only', 'workspace-write', 'full'] as const;
/** The sandbox provider that confines nothing. */
export const UNCONFINED = 'off';

const ruleText = (r: { tool: string; pattern: string }) => `${r.tool}:${r.pattern}`;

/** -1 narrower, 0 the same, 1 wider. */
function rank(key: Exclude<PolicyKey, 'allow'>, from: SessionPolicy, to: SessionPolicy): -1 | 0 | 1 {
  const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);
  switch (key) {
    case 'approval':
      return sign(APPROVAL.indexOf(to.approval) - APPROVAL.indexOf(from.approval));
    case 'mode':
      return sign(MODE.indexOf(to.mode) - MODE.indexOf(from.mode));
    case 'network':
      return sign(Number(to.network) - Number(from.network));
    case 'sandbox':
      if (from.sandbox === to.sandbox) return 0;
      if (to.sandbox === UNCONFINED) return 1;
      if (from.sandbox === UNCONFINED) return -1;
      // Two providers that both confine, in no known order: not narrower, so it counts as wider.
      return 1;
  }
}

const KEYS = ['approval', 'sandbox', 'mode', 'network'] as const;

/** Contract: pure; every dimension that changes, as wider or narrower, in the fixed order approval, sandbox, mode, network, allow. */
export function comparePolicy(from: SessionPolicy, to: SessionPolicy): { widened: PolicyChange[]; narrowed: PolicyChange[] } {
  const widened: PolicyChange[] = [];
  const narrowed: PolicyChange[] = [];
  for (const key of KEYS) {
    const r = rank(key, from, to);
    if (r === 0) continue;
    (r > 0 ? widened : narrowed).push({ key, from: String(from[key]), to: String(to[key]) });
  }
  const had = new Set(from.allow.map(ruleText));
  const has = new Set(to.allow.map(ruleText));
  const added = [...has].filter((r) => !had.has(r));
  const dropped = [...had].filter((r) => !has.has(r));
  if (added.length > 0) widened.push({ key: 'allow', from: '', to: added.join(' ') });
  if (dropped.length > 0) narrowed.push({ key: 'allow', from: dropped.join(' '), to: '' });
  return { widened, narrowed };
}

/** One policy as a person reads it: `approval never, sandbox bwrap workspace-write, no network`. */
export function describePolicy(p: SessionPolicy): string {
  const sandbox = p.sandbox === UNCONFINED ? 'sandbox off' : `sandbox ${p.sandbox} ${p.mode}`;
  const allow = p.allow.length > 0 ? `, allow ${p.allow.map(ruleText).join(' ')}` : '';
  return `approval ${p.approval}, ${sandbox}, ${p.network ? 'network' : 'no network'}${allow}`;
}

/** `approval never → auto, network false → true, allow + bash:^ls$`. */
export const describeChanges = (cs: readonly PolicyChange[]): string =>
  cs.map((c) => (c.key !== 'allow' ? `${c.key} ${c.from} → ${c.to}` : c.to ? `allow + ${c.to}` : `allow − ${c.from}`)).join(', ');
