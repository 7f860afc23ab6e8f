/** `edit_file`: replace one exact, unique piece of text in a file. */
import { readFile, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { failure, fromToolError, fsFailure, ok } from './output.js';
import { countOccurrences, looksBinary, numberLines } from './text.js';
import { ToolError, type ToolDefinition } from './types.js';
import { resolveInWorkspace } from './workspace.js';

/** Lines of context shown around an edit, so the model can check it landed where meant. */
const CONTEXT_LINES = 3;

const parameters = z.strictObject({
  path: z.string().describe('File path, relative to the workspace root.'),
  old_text: z
    .string()
    .min(1)
    .describe('Exact text to replace, including whitespace and indentation. Must occur exactly once in the file.'),
  new_text: z.string().describe('The text to put in its place.'),
});
export type EditFileArgs = z.infer<typeof parameters>;

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** The edited region plus a few lines either side, numbered as in read_file. */
export function editContext(after: string, start: number, insertedLength: number): string {
  const lines = after.split('\n');
  const firstChanged = lineOf(after, start);
  const lastChanged = lineOf(after, start + Math.max(insertedLength - 1, 0));
  const from = Math.max(1, firstChanged - CONTEXT_LINES);
  const to = Math.min(lines.length, lastChanged + CONTEXT_LINES);
  return numberLines(lines.slice(from - 1, to), from);
}

export const editFileTool: ToolDefinition<EditFileArgs> = {
  name: 'edit_file',
  description:
    'Replace one occurrence of old_text with new_text in a file. old_text must match the file exactly ' +
    '(without read_file line-number prefixes) and occur exactly once; include surrounding lines to make it unique.',
  parameters,
  readOnly: false,
  idempotent: false,
  timeoutMs: 30_000,
  present: (args) => {
    const lines = (s: string) => (s === '' ? 0 : s.split('\n').length);
    return `edit_file ${args.path} (-${lines(args.old_text)} +${lines(args.new_text)} lines)`;
  },
  async execute(args, ctx) {
    const file = await resolveInWorkspace(ctx, args.path, { mustExist: true, forWrite: true });
    if (file instanceof ToolError) return fromToolError(file);
    let bytes: Buffer;
    try {
      bytes = await readFile(file, { signal: ctx.signal });
    } catch (err) {
      return fsFailure(err, args.path);
    }
    if (looksBinary(bytes)) return failure('BINARY_FILE', `"${args.path}" is a binary file; edit_file edits text only.`);
    const before = bytes.toString('utf8');

    const count = countOccurrences(before, args.old_text);
    if (count === 0) {
      const crlf = before.includes('\r\n') && !args.old_text.includes('\r\n') && args.old_text.includes('\n');
      const hint = crlf
        ? ' The file uses CRLF line endings; old_text must too.'
        : ' Check whitespace and indentation, or read_file again to see the current text.';
      return failure('EDIT_NOT_FOUND', `old_text was not found in "${args.path}".${hint}`);
    }
    if (count > 1) {
      return failure(
        'EDIT_AMBIGUOUS',
        `old_text occurs ${count} times in "${args.path}"; include more surrounding text so it matches exactly once.`,
      );
    }

    const start = before.indexOf(args.old_text);
    // Slicing, not String.replace: a `$&` or `$1` in new_text must land literally.
    const after = before.slice(0, start) + args.new_text + before.slice(start + args.old_text.length);
    try {
      await writeFile(file, after, { signal: ctx.signal });
    } catch (err) {
      return fsFailure(err, args.path);
    }
    const header = `Edited ${args.path} at line ${lineOf(after, start)}:`;
    return ok(`${header}\n${editContext(after, start, args.new_text.length)}`);
  },
};
