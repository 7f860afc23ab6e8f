/**
 * The stable codes the harness itself writes into the log, beside the entries that carry them
 * (`entries.ts`): a `tool/result`'s `code` when the harness, not the tool, decided the outcome; a
 * `turn/end`'s `code` when a turn ends in error; a `subagent/end`'s and a delegation result's `code`.
 * Readers (people, scripts, evals) match on these, so they never change once written. The field stays
 * a string in the schema: tools, plugins and providers add codes of their own.
 */

/**
 * A closed set of stable codes, each spelled as its own name, from the codes and what each means:
 * `codes({ A: 'why A' })` is `{ A: 'A' }` (frozen), so a caller writes `Set.A` and never the string.
 */
export function codes<const T extends Record<string, string>>(meanings: T): { readonly [K in keyof T]: K } {
  return Object.freeze(Object.fromEntries(Object.keys(meanings).map((k) => [k, k]))) as { readonly [K in keyof T]: K };
}

/** The union of a code set's codes. */
export type CodeOf<T> = T[keyof T];

/** A `tool/result` the harness wrote: the call never ran, was stopped, was blocked, or its outcome is not known. */
export const ToolResultCode = codes({
  ABORTED_BEFORE_DISPATCH: 'Cancelled before dispatch: the call did not run.',
  DISPATCH_NOT_DURABLE: 'The dispatch could not be made durable, so the call was not run.',
  INVALID_CALL: 'The call failed validation or admission (a validator may give a more specific code).',
  TOOL_ERROR: 'The tool threw.',
  TOOL_NOT_STARTED: 'Repair closed a call that was never dispatched.',
  TOOL_OUTCOME_UNKNOWN: 'Repair closed a call that was dispatched but never settled: it may or may not have run.',
  TOOL_TIMEOUT: 'The call passed its deadline and was stopped (status `unknown` when it did not confirm it stopped).',
  ABORTED: 'The call was cancelled while it ran.',
  BLOCKED: 'A post-execute check blocked the result after the call ran; its output is withheld.',
});
export type ToolResultCode = CodeOf<typeof ToolResultCode>;

/** A `turn/end` with reason `error`, and why. */
export const TurnEndCode = codes({
  LOG_NOT_DURABLE: 'The log could not be made durable; the turn stops before anything else happens.',
  PRE_STEP_FAILED: 'A pre-step hook failed.',
  BUDGET_EXHAUSTED: 'The session\'s budget is spent and no one raised it.',
  CONTEXT_WINDOW_EXCEEDED: 'The context overflowed and compaction could not shrink it.',
  REQUEST_BUILD_FAILED: 'The model request could not be built.',
  SESSION_CRASHED: 'The session itself failed (a defect, or its store gone): its open turn is closed as it stood, nothing re-run.',
});
export type TurnEndCode = CodeOf<typeof TurnEndCode>;

/** A delegation that did not complete: `subagent/end`'s code and the delegating call's result. */
export const SubagentCode = codes({
  SUBAGENT_REFUSED: 'The registry refused the delegation (or could not decide): no child was created.',
  SUBAGENT_OPEN_FAILED: 'The child session could not be opened.',
  SUBAGENT_CRASHED: 'The child crashed while it ran.',
  SUBAGENT_FAILED: 'The child ran and did not complete (or the delegation ended without a result).',
  TREE_BUDGET_EXHAUSTED: 'The delegation tree\'s budget (`--tree-budget`) is spent.',
  BUDGET_EXHAUSTED: 'The child\'s own budget is spent.',
  ABORTED: 'The parent cancelled.',
});
export type SubagentCode = CodeOf<typeof SubagentCode>;
