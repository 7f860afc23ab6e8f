/**
 * What a session was started with, it keeps (ADR 0027): the policy
 * `session/start` logs, the policy a log says a session runs under now, and
 * the rule for a process that goes on with it under another one — or in
 * another workspace (ADR 0041). The order of "wider" is `safety/policy-order.ts`.
 */
import type { DraftOf, Entry } from '../log/entries.js';
import type { SessionPolicy } from '../log/entries-session.js';
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

/** Contract: pure; the last `session/policy`'s `cwd.to`, else `session/start`'s `cwd`: where the session's commands run now (ADR 0041). */
export function loggedWorkspace(entries: readonly Entry[]): string | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.kind === 'session/policy' && e.cwd) return e.cwd.to;
    if (e.kind === 'session/start') return e.cwd;
  }
  return undefined;
}

/** A process asked to go on with a session in another workspace than its log says (code `WORKSPACE_CHANGED`); nothing was written. */
export class WorkspaceChangedError extends Error {
  override name = 'WorkspaceChangedError';
  readonly code = 'WORKSPACE_CHANGED';
  constructor(
    message: string,
    readonly logged: string,
    readonly requested: string,
  ) {
    super(message);
  }
}

export interface SettleOptions {
  /** Let a widening through (`--override-policy`), logged. */
  override?: boolean;
  /** The workspace this process would run the session in; compared with the logged one. */
  workspace?: string;
  /** Let a move to another workspace through (`--move-workspace`), logged. */
  moveWorkspace?: boolean;
}

/** The move to log, or undefined when the workspace is the logged one; throws `WorkspaceChangedError` when it is not allowed. */
function settleWorkspace(entries: readonly Entry[], o: SettleOptions): { from: string; to: string } | undefined {
  const logged = loggedWorkspace(entries);
  if (o.workspace === undefined || logged === undefined || logged === o.workspace) return undefined;
  const start = entries[0] as Extract<Entry, { kind: 'session/start' }>;
  const was = `WORKSPACE_CHANGED: session ${start.id} runs in ${logged}, as its log says; ${o.workspace} is another workspace`;
  if (isChildLog(entries)) throw new WorkspaceChangedError(`${was}, and a subagent's session never moves`, logged, o.workspace);
  if (!o.moveWorkspace) throw new WorkspaceChangedError(`${was} (run it without --cwd to use its own, or pass --move-workspace to move it there, which is logged)`, logged, o.workspace);
  return { from: logged, to: o.workspace };
}

/**
 * Contract: pure. Nothing to log when the policies and the workspace are the same or the log has none; a
 * narrowing is logged (`by: 'flags'`); a widening is logged (`by: 'override-policy'`) only with `override` and
 * never for a child — otherwise it throws `PolicyWidenedError` with one line naming the logged and the
 * requested values. A workspace other than the logged one is logged (`cwd`) only with `moveWorkspace` and
 * never for a child — otherwise it throws `WorkspaceChangedError` naming both paths.
 */
export function settlePolicy(entries: readonly Entry[], requested: SessionPolicy, o: SettleOptions = {}): DraftOf<'session/policy'> | undefined {
  const logged = loggedPolicy(entries);
  const { widened, narrowed } = logged ? comparePolicy(logged, requested) : { widened: [], narrowed: [] };
  if (logged && widened.length > 0) {
    const start = entries[0] as Extract<Entry, { kind: 'session/start' }>;
    const was = `session ${start.id} was started with ${describePolicy(logged)}`;
    if (isChildLog(entries)) throw new PolicyWidenedError(`${was}; ${describeChanges(widened)} would widen it, and a subagent's session is never widened`, logged, requested);
    if (!o.override) throw new PolicyWidenedError(`${was}; ${describeChanges(widened)} would widen it (pass --override-policy to allow it)`, logged, requested);
  }
  const moved = settleWorkspace(entries, o);
  if (widened.length === 0 && narrowed.length === 0 && !moved) return undefined;
  // A log from before ADR 0027 has no policy to compare: a move alone is logged with the policy as it runs now.
  const by = widened.length > 0 ? 'override-policy' : narrowed.length > 0 ? 'flags' : 'move-workspace';
  return { kind: 'session/policy', ignorable: true, from: logged ?? requested, to: requested, by, ...(moved ? { cwd: moved } : {}) };
}
