/**
 * Render intents (ADR 0067): what a finished tool call means to a person, as
 * plain data derived from the call's arguments and its logged result. A
 * tool's `presentResult` says which kind and gives its fields; every surface
 * (the CLI, the viewer, ACP) renders each kind its own way. Nothing here is
 * markup or terminal codes: a surface decides how a diff or a command looks.
 */

/** The logged result a presenter reads (`tool/result`): its status, its content, its code. */
export interface LoggedResult {
  status: string;
  content: string;
  code?: string;
}

/** One line of a diff, as `tools/diff.ts` computes it. */
export interface IntentDiffLine {
  op: ' ' | '-' | '+';
  text: string;
}

/** One hit of a search: a file, and for a content search the line and its text. */
export interface SearchMatch {
  path: string;
  line?: number;
  text?: string;
}

/** One step of a plan (`update_plan`, ADR 0076), as ACP's plan entry has it: what, how far, and how much it matters (none: medium). */
export interface PlanStep {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
  priority?: 'high' | 'medium' | 'low';
}

/**
 * What a tool's `presentResult` returns: a kind and its fields.
 * - `generic`: text (the result's content, by default).
 * - `terminal`: a command, its exit code (`null`: none, killed or never run) and what it printed.
 * - `diff`: a file's change: its path, the text replaced (`null` for a whole new content), the new text, and the line diff.
 * - `search`: what was searched for, the hits, and notes (what was cut or skipped).
 * - `plan`: the steps of the plan the call set, whole (each call replaces the one before).
 */
export type IntentBody =
  | { kind: 'generic'; text: string }
  | { kind: 'terminal'; command: string; exitCode: number | null; output: string }
  | { kind: 'diff'; path: string; oldText: string | null; newText: string; lines: IntentDiffLine[] }
  | { kind: 'search'; query: string; matches: SearchMatch[]; notes: string[] }
  | { kind: 'plan'; entries: PlanStep[] };

export type IntentKind = IntentBody['kind'];

/** A render intent: the body, with the call's one-line title (its `present`) and the result's status and code. */
export type RenderIntent = IntentBody & { title: string; status: string; code?: string };
