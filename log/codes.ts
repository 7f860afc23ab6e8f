/**
 * The stable codes the harness itself writes into the log, beside the entries that carry them
 * (`entries.ts`): a `tool/result`'s `code` when the harness, not the tool, decided the outcome; a
 * `turn/end`'s `code` when a turn ends in error; a `subagent/end`'s and a delegation result's `code`.
 * Readers (people, scripts, evals) match on these, so they never change once written. The field stays
 * a string in the schema: tools, plugins and providers add codes of their own.
 */

/** A `tool/result` the harness wrote: the call never ran, or its outcome is not known. */
export const ToolResultCode = {
  /** Cancelled before dispatch: the call did not run. */
  ABORTED_BEFORE_DISPATCH: 'ABORTED_BEFORE_DISPATCH',
  /** The dispatch could not be made durable, so the call was not run. */
  DISPATCH_NOT_DURABLE: 'DISPATCH_NOT_DURABLE',
  /** The call failed validation or admission (a validator may give a more specific code). */
  INVALID_CALL: 'INVALID_CALL',
  /** The tool threw. */
  TOOL_ERROR: 'TOOL_ERROR',
  /** Repair closed a call that was never dispatched. */
  TOOL_NOT_STARTED: 'TOOL_NOT_STARTED',
  /** Repair closed a call that was dispatched but never settled: it may or may not have run. */
  TOOL_OUTCOME_UNKNOWN: 'TOOL_OUTCOME_UNKNOWN',
} as const;
export type ToolResultCode = (typeof ToolResultCode)[keyof typeof ToolResultCode];

/** A `turn/end` with reason `error`, and why. */
export const TurnEndCode = {
  /** The log could not be made durable; the turn stops before anything else happens. */
  LOG_NOT_DURABLE: 'LOG_NOT_DURABLE',
  /** A pre-step hook failed. */
  PRE_STEP_FAILED: 'PRE_STEP_FAILED',
  /** The session's budget is spent and no one raised it. */
  BUDGET_EXHAUSTED: 'BUDGET_EXHAUSTED',
  /** The context overflowed and compaction could not shrink it. */
  CONTEXT_WINDOW_EXCEEDED: 'CONTEXT_WINDOW_EXCEEDED',
  /** The model request could not be built. */
  REQUEST_BUILD_FAILED: 'REQUEST_BUILD_FAILED',
} as const;
export type TurnEndCode = (typeof TurnEndCode)[keyof typeof TurnEndCode];

/** A delegation that did not complete: `subagent/end`'s code and the delegating call's result. */
export const SubagentCode = {
  SUBAGENT_REFUSED: 'SUBAGENT_REFUSED',
  SUBAGENT_OPEN_FAILED: 'SUBAGENT_OPEN_FAILED',
  SUBAGENT_CRASHED: 'SUBAGENT_CRASHED',
  SUBAGENT_FAILED: 'SUBAGENT_FAILED',
  /** The delegation tree's budget (`--tree-budget`) is spent. */
  TREE_BUDGET_EXHAUSTED: 'TREE_BUDGET_EXHAUSTED',
  /** The child's own budget is spent. */
  BUDGET_EXHAUSTED: 'BUDGET_EXHAUSTED',
  /** The parent cancelled. */
  ABORTED: 'ABORTED',
} as const;
export type SubagentCode = (typeof SubagentCode)[keyof typeof SubagentCode];
