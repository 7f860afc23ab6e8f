/**
 * Nested AGENTS.md files (ADR 0060): a file tool that touches a directory
 * below the workspace gets, once per session, the text of the instructions
 * file nearest to it appended to its result. The result is logged, so the
 * model sees the text only through a logged entry and replay (which hands
 * back logged results) shows it byte for byte.
 */
import { dirname, resolve } from 'node:path';
import type { Entry } from '../../log/entries.js';
import { truncateMiddle } from '../../log/context/truncate.js';
import type { AgentsFile } from './agents-files.js';

/** The tools whose `path` names a place, and whether the place is the path's directory or the path itself. */
const TOUCHES: Readonly<Record<string, 'parent' | 'self'>> = { read_file: 'parent', write_file: 'parent', edit_file: 'parent', list_dir: 'self' };

/** One nested file is cut in the middle past this many code points. */
export const NESTED_FILE_CAP = 16_000;
/** All nested files of a session together: past it a file is named, not shown. */
export const NESTED_TOTAL_CAP = 64_000;

/** Contract: pure; the absolute directory a call of a file tool touched, undefined for other tools. */
export function touchedDir(tool: string, args: unknown, workspace: string): string | undefined {
  const how = TOUCHES[tool];
  if (!how) return undefined;
  const p = (args as { path?: unknown } | null)?.path;
  const given = typeof p === 'string' ? p : how === 'self' ? '.' : undefined;
  if (given === undefined) return undefined;
  const abs = resolve(workspace, given);
  return how === 'parent' ? dirname(abs) : abs;
}

const OPEN = '\n\n<agents-md path=';
// Only at the very end of a file tool's result, where the tool's own output (numbered lines, a listing) cannot put it.
const BLOCK = /\n\n<agents-md path=("(?:[^"\\]|\\.)*")>\n([\s\S]*)\n<\/agents-md>$/;

/** Contract: pure; the nested files a session's log already showed, with the code points each took. */
export function shownNested(entries: readonly Entry[]): Map<string, number> {
  const shown = new Map<string, number>();
  for (const e of entries) {
    if (e.kind !== 'tool/result' || !(e.name in TOUCHES)) continue;
    const m = BLOCK.exec(e.content);
    if (m) shown.set(JSON.parse(m[1]!) as string, [...m[2]!].length);
  }
  return shown;
}

/** Contract: pure; the block appended to a result for `file`, given what the session showed so far. */
export function nestedBlock(file: AgentsFile, spent: number): string {
  const cut = truncateMiddle(file.text.trim(), NESTED_FILE_CAP * 0.75, NESTED_FILE_CAP * 0.25, (c) => `\n[… ${c.codePoints} characters of ${file.path} left out …]\n`).text;
  const fits = spent + [...cut].length <= NESTED_TOTAL_CAP;
  const body = fits
    ? `Instructions for this directory (nearest file wins; they refine the workspace's):\n${cut}`
    : `[not shown: this session's nested AGENTS files reached ${NESTED_TOTAL_CAP} characters; read ${file.path} if you need it]`;
  return `${OPEN}${JSON.stringify(file.path)}>\n${body}\n</agents-md>`;
}
