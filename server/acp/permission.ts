/**
 * The ACP approval provider: an `Answerer` that asks the client with
 * `session/request_permission`. Its four options map onto bridle's outcomes:
 * allow once → `allowed-once`; allow always → `allowed-always` with the
 * exact rule of the call (logged, and rebuilt from the log on load); reject
 * once → `rejected`; reject always → `rejected`, and the same call (same
 * tool, same rendering) is rejected without asking for as long as this agent
 * holds the session. A client that cancels the question answers `cancelled`;
 * one that errors, goes away or names an option it was not offered denies
 * (`actors/ask-approval.ts` makes a throw `unavailable`).
 *
 * A tool's question (an MCP server's input request, ADR 0065) is offered
 * accept or decline only, beside the call that asked: a permission request
 * carries no form, so a yes takes the form's defaults, and a form with a
 * required field that has none is declined by bridle, saying so.
 */
import type { PermissionOption, RequestPermissionRequest, RequestPermissionResponse, ToolCallUpdate } from '@agentclientprotocol/sdk';
import type { ApprovalRule } from '../../log/entries-calls.js';
import type { AnswerRequest, Answerer, ApprovalAnswer } from '../../ports/approval.js';

export const QUESTION_OPTIONS: readonly PermissionOption[] = [
  { optionId: 'allow-once', name: 'Accept', kind: 'allow_once' },
  { optionId: 'reject-once', name: 'Decline', kind: 'reject_once' },
];

export const PERMISSION_OPTIONS: readonly PermissionOption[] = [
  { optionId: 'allow-once', name: 'Allow once', kind: 'allow_once' },
  { optionId: 'allow-always', name: 'Always allow this', kind: 'allow_always' },
  { optionId: 'reject-once', name: 'Reject', kind: 'reject_once' },
  { optionId: 'reject-always', name: 'Always reject this', kind: 'reject_always' },
];

export interface PermissionOptions {
  /** The ACP session the question belongs to. */
  sessionId: () => string;
  /** Sends `session/request_permission`; aborting `signal` cancels the question (`$/cancel_request`). */
  ask: (params: RequestPermissionRequest, signal: AbortSignal) => Promise<RequestPermissionResponse>;
  /** The call as `tool_call` showed it (title, kind, locations), so the client can show the question beside it. */
  toolCall: (request: AnswerRequest) => ToolCallUpdate;
  /** Who answered, in the log: `acp:<client name>`. */
  by: string;
}

const sameRule = (a: ApprovalRule, b: ApprovalRule) => a.tool === b.tool && a.pattern === b.pattern;

/** Contract: as `Answerer`; rejects when the client does (error, disconnect), which denies. */
export function permissionAnswerer(o: PermissionOptions): Answerer {
  const rejectedAlways: ApprovalRule[] = [];
  return async (request): Promise<ApprovalAnswer> => {
    if (rejectedAlways.some((r) => sameRule(r, request.always))) return { outcome: 'rejected', by: `${o.by} (rejected always)` };
    const offered = request.form ? QUESTION_OPTIONS : PERMISSION_OPTIONS;
    const res = await o.ask({ sessionId: o.sessionId(), toolCall: o.toolCall(request), options: [...offered] }, request.signal);
    if (res.outcome.outcome === 'cancelled') return { outcome: 'cancelled', by: o.by };
    const chosen = res.outcome.optionId;
    const option = offered.find((p) => p.optionId === chosen);
    switch (option?.kind) {
      case 'allow_once':
        return { outcome: 'allowed-once', by: o.by };
      case 'allow_always':
        return { outcome: 'allowed-always', by: o.by, rule: request.always };
      case 'reject_once':
        return { outcome: 'rejected', by: o.by };
      case 'reject_always':
        rejectedAlways.push(request.always);
        return { outcome: 'rejected', by: `${o.by} (rejected always)` };
      default:
        return { outcome: 'unavailable', by: `${o.by}: an option it was not offered: ${JSON.stringify(chosen).slice(0, 80)}` };
    }
  };
}
