/**
 * A call's entries, in the order its life logs them: `tool/call`, approval
 * asked and decided, `tool/dispatch`, `tool/result` (I2: one result, after
 * the call, in its step). Each carries the call's place (`inCall`). Part of
 * the one `Entry` union in `entries.ts`.
 */
import { z } from 'zod';
import { envelope, inCall, SurfaceOp, ToolResultStatus, Verdict } from './entry-values.js';

export const ToolCall = z.strictObject({
  ...envelope,
  kind: z.literal('tool/call'),
  ...inCall,
  /** The id the model gave the call; results carry it back on the wire. */
  toolCallId: z.string(),
  name: z.string(),
  arguments: z.string(),
});

export const ApprovalOutcome = z.enum(['allowed-once', 'allowed-always', 'rejected', 'cancelled', 'unavailable']);
export type ApprovalOutcome = z.infer<typeof ApprovalOutcome>;

export const ApprovalAsked = z.strictObject({
  ...envelope,
  kind: z.literal('approval/asked'),
  ...inCall,
  name: z.string(),
  reason: z.string(),
});

/** A session-scoped allow rule: the tool, and a regex matched against the call's canonical rendering (bash: the command; file tools: the path). */
export const ApprovalRule = z.strictObject({ tool: z.string().min(1), pattern: z.string() });
export type ApprovalRule = z.infer<typeof ApprovalRule>;

export const ApprovalDecided = z.strictObject({
  ...envelope,
  kind: z.literal('approval/decided'),
  ...inCall,
  outcome: ApprovalOutcome,
  by: z.string(),
  /** With `allowed-always`: the rule the answer added; rebuilt from the log on resume. */
  rule: ApprovalRule.optional(),
});

export const ToolDispatch = z.strictObject({
  ...envelope,
  kind: z.literal('tool/dispatch'),
  ...inCall,
  name: z.string(),
  idempotent: z.boolean(),
});

export const ToolResult = z.strictObject({
  ...envelope,
  kind: z.literal('tool/result'),
  ...inCall,
  toolCallId: z.string(),
  name: z.string(),
  status: ToolResultStatus,
  /** A stable code for anything but `ok`: UNKNOWN_TOOL, INVALID_ARGUMENTS, DENIED, ABORTED, TOOL_TIMEOUT, … (the harness's own: `ToolResultCode`, codes.ts) */
  code: z.string().optional(),
  content: z.string(),
  verdict: Verdict.optional(),
  /** With `denied` (format 2): the reason the decision gave, as the content states it. */
  reason: z.string().optional(),
  surfaceOp: SurfaceOp,
});
