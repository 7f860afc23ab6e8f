/**
 * A render intent as terminal text (ADR 0067): the lines the transcript shows
 * under a result's one-line summary. `generic` adds none (the summary is the
 * whole of it, as before presenters); a command shows the tail of what it
 * printed, a change its diff lines, a search its hits, each cut to a few lines
 * with a count of the rest, a plan its steps as a checklist. Plain strings: the caller passes each through
 * `visible` and dims it.
 */
import type { PlanStep, RenderIntent } from '../ports/present.js';
import { PLAN_MAX_ENTRIES } from '../tools/update-plan.js';

/** At most this many lines of a command's output, a diff or a search's hits. */
export const TEXT_BODY_LINES = 8;
const INDENT = '    ';

function cut(lines: readonly string[], from: 'head' | 'tail', what: string): string[] {
  if (lines.length <= TEXT_BODY_LINES) return [...lines];
  const rest = `… ${lines.length - TEXT_BODY_LINES} ${what}`;
  return from === 'head' ? [...lines.slice(0, TEXT_BODY_LINES), rest] : [rest, ...lines.slice(-TEXT_BODY_LINES)];
}

const outputLines = (output: string) => output.split('\n').filter((l) => l !== '' && !/^--- std(out|err) ---$/.test(l));

const MARKS: Record<PlanStep['status'], string> = { completed: '[x]', in_progress: '[>]', pending: '[ ]' };

/** A plan as a checklist, every step (a plan is short: `update_plan` takes at most `PLAN_MAX_ENTRIES`); a priority other than medium said after it. */
function planLines(entries: readonly PlanStep[]): string[] {
  if (entries.length === 0) return ['(no plan)'];
  const shown = entries.slice(0, PLAN_MAX_ENTRIES).map((e) => `${MARKS[e.status]} ${e.content}${e.priority && e.priority !== 'medium' ? ` (${e.priority})` : ''}`);
  return entries.length > shown.length ? [...shown, `… ${entries.length - shown.length} more steps`] : shown;
}

/** Contract: pure, total; the lines under a result's summary, indented, never ending in a newline. */
export function intentText(intent: RenderIntent): string[] {
  switch (intent.kind) {
    case 'generic':
      return [];
    case 'terminal':
      return cut(outputLines(intent.output), 'tail', 'earlier lines').map((l) => `${INDENT}│ ${l}`);
    case 'diff':
      return [`${INDENT}${intent.path}`, ...cut(intent.lines.filter((l) => l.op !== ' ').map((l) => `${l.op} ${l.text}`), 'head', 'more changed lines').map((l) => `${INDENT}${l}`)];
    case 'plan':
      return planLines(intent.entries).map((l) => `${INDENT}${l}`);
    case 'search': {
      const files = new Set(intent.matches.map((m) => m.path)).size;
      const hits = intent.matches.map((m) => (m.line === undefined ? m.path : `${m.path}:${m.line}: ${m.text ?? ''}`));
      const head = `${intent.matches.length} match${intent.matches.length === 1 ? '' : 'es'}${intent.matches.some((m) => m.line !== undefined) ? ` in ${files} file${files === 1 ? '' : 's'}` : ''} for ${intent.query}`;
      return [head, ...cut(hits, 'head', 'more'), ...intent.notes].map((l) => `${INDENT}${l}`);
    }
  }
}
