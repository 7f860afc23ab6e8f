/**
 * The approval seam's default policy: read-only tools need no approval; a
 * tool that writes or runs commands asks, unless the policy says otherwise.
 */
import type { ApprovalAnswer, Decision, ToolCallContext } from '../machines/tool-call.machine.js';

export type ApprovalPolicy = 'never' | 'ask' | 'auto';

/** A person or program that answers approval requests. Contract: may reject or throw; either denies. */
export type Answerer = (request: { callId: string; name: string; arguments: string; reason: string; signal: AbortSignal }) => Promise<ApprovalAnswer>;

/** Contract: pure. */
export function decideByPolicy(policy: ApprovalPolicy, call: Pick<ToolCallContext, 'name' | 'validation'>): Decision {
  const readOnly = call.validation?.ok === true && call.validation.readOnly;
  if (readOnly || policy === 'auto') return { kind: 'allow' };
  if (policy === 'never') return { kind: 'deny', reason: `approval policy "never": ${call.name} changes the workspace or runs commands` };
  return { kind: 'ask', reason: `${call.name} changes the workspace or runs commands` };
}
