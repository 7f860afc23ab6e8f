/** The one builder of `tool/result` drafts: the machines' results and repair's synthetic ones share it. */
import type { DraftOf, ToolResultStatus } from './entries.js';

export interface ResultRef {
  turn: string;
  step: string;
  callId: string;
  toolCallId: string;
  name: string;
}

/**
 * Contract: pure. The verdict says what the harness can vouch for: a result
 * whose outcome is unknown is `uncertain`; a post-execute refusal (`BLOCKED`)
 * is `rejected`; anything else carries none.
 */
export function draftToolResult(c: ResultRef, status: ToolResultStatus, content: string, code?: string, reason?: string): DraftOf<'tool/result'> {
  const d: DraftOf<'tool/result'> = {
    kind: 'tool/result',
    turn: c.turn,
    step: c.step,
    callId: c.callId,
    toolCallId: c.toolCallId,
    name: c.name,
    status,
    content,
    surfaceOp: 'append',
  };
  if (code !== undefined) d.code = code;
  if (reason !== undefined) d.reason = reason;
  if (status === 'unknown') d.verdict = 'uncertain';
  else if (code === 'BLOCKED') d.verdict = 'rejected';
  return d;
}
