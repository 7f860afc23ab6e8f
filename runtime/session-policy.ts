/**
 * What a session was started with, it keeps (ADR 0027): the policy
 * `session/start` logs, the policy a log says a session runs under now, and
 * the rule for a process that goes on with it under another one. The order
 * of "wider" is `safety/policy-order.ts`.
 */
import type { DraftOf, Entry, SessionPolicy } from '../log/entries.js';
import type { ApprovalService } from '../ports/approval.js';
import type { SandboxService } from '../ports/sandbox.js';
import { comparePolicy, describeChanges, describePolicy } from '../safety/policy-order.js';

/** Contract: pure; the policy a session of these services runs under, as `session/start` logs it. */
export function policyOf(approval: ApprovalService, sandbox: SandboxService): SessionPolicy {
  const confines = sandbox.provider.confines;
  return {
    approval: approval.policy,
    sandbox: sandbox.provider.id,
    mode: confines ? sandbox.policy.mode : 'full',
    network: confines ? sandbox.policy.network : true,
    allow: approval.rules.map((r) => ({ tool: r.tool, pattern: r.pattern })),
  };
}

/** Contract: pure; the last `session/policy`'s `to`, else `session/start`'s policy; undefined for a log written before either existed. */
export function loggedPolicy(entries: readonly Entry[]): SessionPolicy | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.kind === 'session/policy') return e.to;
    if (e.kind === 'session/start') return e.policy;
  }
  return undefined;
}

/** A subagent's session: its approval is `never` (I10) and nothing may widen what it was started with. */
export const isChildLog = (entries: readonly Entry[]): boolean => {
  const start = entries[0];
  return start?.kind === 'session/start' && (start.parent !== null || start.depth > 0);
};

/** A process asked to go on with a session under a wider policy than it has (code `POLICY_WIDENED`); nothing was written. */
export class PolicyWidenedError extends Error {
  override name = 'PolicyWidenedError';
  readonly code = 'POLICY_WIDENED';
  constructor(
    message: string,
    readonly logged: SessionPolicy,
    readonly requested: SessionPolicy,
  ) {
    super(message);
  }
}

/**
 * Contract: pure. Nothing to log when the policies are the same or the log has none; a narrowing is logged
 * (`by: 'flags'`); a widening is logged (`by: 'override-policy'`) only with `override` and never for a child —
 * otherwise it throws `PolicyWidenedError` with one line naming the logged and the requested values.
 */
export function settlePolicy(entries: readonly Entry[], requested: SessionPolicy, o: { override?: boolean } = {}): DraftOf<'session/policy'> | undefined {
  const logged = loggedPolicy(entries);
  if (!logged) return undefined;
  const { widened, narrowed } = comparePolicy(logged, requested);
  if (widened.length === 0 && narrowed.length === 0) return undefined;
  if (widened.length > 0) {
    const start = entries[0] as Extract<Entry, { kind: 'session/start' }>;
    const was = `session ${start.id} was started with ${describePolicy(logged)}`;
    if (isChildLog(entries)) throw new PolicyWidenedError(`${was}; ${describeChanges(widened)} would widen it, and a subagent's session is never widened`, logged, requested);
    if (!o.override) throw new PolicyWidenedError(`${was}; ${describeChanges(widened)} would widen it (pass --override-policy to allow it)`, logged, requested);
  }
  return { kind: 'session/policy', ignorable: true, from: logged, to: requested, by: widened.length > 0 ? 'override-policy' : 'flags' };
}
