/**
 * The built-in tools' result presenters (ADR 0067): each reads its tool's own
 * result text back into a render intent. Pure, total over any text: a result
 * that is not in the tool's form (a denial, a timeout before the command ran)
 * gives `undefined`, which the harness shows as `generic`.
 */
import type { IntentBody, LoggedResult, SearchMatch } from '../ports/present.js';
import { changeOf } from './diff.js';

const EXIT = /^exit code: (?:(\d+)|none \(killed by [^\n]*\))$/m;

/** bash: the command, the exit code of `formatCommandResult`'s first line, and everything after it. */
export function terminalIntent(command: string, result: LoggedResult): IntentBody | undefined {
  const m = EXIT.exec(result.content);
  if (!m) return undefined;
  const output = result.content.slice(m.index + m[0].length).replace(/^\n/, '');
  return { kind: 'terminal', command, exitCode: m[1] === undefined ? null : Number(m[1]), output };
}

/** edit_file and write_file: the change the call asked for, whatever the result (its status says whether it landed). */
export function diffIntent(tool: 'edit_file' | 'write_file', args: Record<string, unknown>): IntentBody | undefined {
  const change = changeOf(tool, args);
  if (!change) return undefined;
  const oldText = tool === 'edit_file' ? (args.old_text as string) : null;
  const newText = (tool === 'edit_file' ? args.new_text : args.content) as string;
  return { kind: 'diff', path: change.path, oldText, newText, lines: change.lines };
}

/** A line of a result that is a note (`[stopped at 500 matches; …]`), not a hit. */
const isNote = (line: string) => line.startsWith('[') && line.endsWith(']');

/** grep: `file:line: text` hits (sorted by the tool), its notes; "No matches …" is zero hits. */
export function grepIntent(query: string, result: LoggedResult): IntentBody | undefined {
  if (result.status !== 'ok') return undefined;
  const matches: SearchMatch[] = [];
  const notes: string[] = [];
  for (const line of result.content.split('\n')) {
    const m = /^(.+?):(\d+): (.*)$/.exec(line);
    if (isNote(line)) notes.push(line);
    else if (m) matches.push({ path: m[1]!, line: Number(m[2]), text: m[3]! });
    else if (!line.startsWith('No matches for ') && line !== '') return undefined;
  }
  return { kind: 'search', query, matches, notes };
}

/** glob: one path a line, its notes; "No files match …" is zero hits. */
export function globIntent(query: string, result: LoggedResult): IntentBody | undefined {
  if (result.status !== 'ok') return undefined;
  const lines = result.content.split('\n').filter((l) => l !== '');
  if (lines[0]?.startsWith('No files match ')) lines.shift();
  return { kind: 'search', query, matches: lines.filter((l) => !isNote(l)).map((path) => ({ path })), notes: lines.filter(isNote) };
}
