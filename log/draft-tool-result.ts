/** The one builder of `tool/result` drafts: the machines' results and repair's synthetic ones share it. */
import type { DraftOf } from './entries.js';
import type { ToolResultStatus } from './entry-values.js';
import { ToolResultCode } from './codes.js';
import { escapedBytes, MAX_RESULT_BYTES, prefixWithin } from './entry-size.js';

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
 * is `rejected`; anything else carries none. Content over `MAX_RESULT_BYTES`
 * (escaped) is cut, saying so, so the entry can always be read back; a cut
 * content is within the limit, so cutting it again changes nothing (replay).
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
    content: capContent(content),
    surfaceOp: 'append',
  };
  if (code !== undefined) d.code = code;
  if (reason !== undefined) d.reason = reason;
  if (status === 'unknown') d.verdict = 'uncertain';
  else if (code === ToolResultCode.BLOCKED) d.verdict = 'rejected';
  return d;
}

/** Room kept for the note that says what was cut. */
const NOTE_ROOM = 256;

/** Contract: pure; `content` if it fits, else its head within the limit and a note naming the sizes. */
export function capContent(content: string, max = MAX_RESULT_BYTES): string {
  const size = escapedBytes(content);
  if (size <= max) return content;
  const head = prefixWithin(content, max - NOTE_ROOM);
  return `${head}\n[result cut: ${size} bytes as logged, over the log's limit of ${max} for one result; the first ${escapedBytes(head)} are kept]`;
}
