/** `edit_file`: replace one exact, unique piece of text in a file. */
import { isUtf8 } from 'node:buffer';
import { z } from 'zod';
import { diffIntent } from './presenters.js';
import { failure, fromRejection, ok, BuiltinCode } from './output.js';
import { countOccurrences, formatBytes, looksBinary, numberLines, utf8 } from './text.js';
import type { ZodToolDefinition, ToolOutput } from '../ports/tools.js';

/** Lines of context shown around an edit, so the model can check it landed where meant. */
const CONTEXT_LINES = 3;
/** Larger files are refused rather than held in memory twice (as bytes and as text). */
export const EDIT_MAX_BYTES = 16 * 1024 * 1024;

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

/** The file's text with the one edit applied, or the refusal the model reads. */
function applyEdit(bytes: Uint8Array, args: EditFileArgs): { after: string; start: number } | ToolOutput {
  if (looksBinary(bytes)) return failure(BuiltinCode.BINARY_FILE, `"${args.path}" is a binary file; edit_file edits text only.`);
  // Decoding would turn every invalid byte into U+FFFD and write that back: refuse rather than change bytes nobody asked about.
  if (!isUtf8(bytes)) {
    return failure(BuiltinCode.NOT_UTF8, `"${args.path}" is not valid UTF-8 (perhaps Latin-1 or another legacy encoding); edit_file edits UTF-8 text only, so nothing was changed. Use bash (e.g. iconv or sed) for this file.`);
  }
  const before = utf8(bytes);

  const count = countOccurrences(before, args.old_text);
  if (count === 0) {
    const crlf = before.includes('\r\n') && !args.old_text.includes('\r\n') && args.old_text.includes('\n');
    const hint = crlf
      ? ' The file uses CRLF line endings; old_text must too.'
      : ' Check whitespace and indentation, or read_file again to see the current text.';
    return failure(BuiltinCode.EDIT_NOT_FOUND, `old_text was not found in "${args.path}".${hint}`);
  }
  if (count > 1) {
    return failure(
      BuiltinCode.EDIT_AMBIGUOUS,
      `old_text occurs ${count} times in "${args.path}"; include more surrounding text so it matches exactly once.`,
    );
  }

  const start = before.indexOf(args.old_text);
  // Slicing, not String.replace: a `$&` or `$1` in new_text must land literally.
  return { after: before.slice(0, start) + args.new_text + before.slice(start + args.old_text.length), start };
}

export const editFileTool: ZodToolDefinition<EditFileArgs> = {
  name: 'edit_file',
  description:
    'Replace one occurrence of old_text with new_text in a file. old_text must match the file exactly ' +
    '(without read_file line-number prefixes) and occur exactly once; include surrounding lines to make it unique.',
  parameters,
  readOnly: false,
  confinement: 'workspace',
  idempotent: false,
  timeoutMs: 30_000,
  present: (args) => {
    const lines = (s: string) => (s === '' ? 0 : s.split('\n').length);
    return `edit_file ${args.path} (-${lines(args.old_text)} +${lines(args.new_text)} lines)`;
  },
  presentResult: (args) => diffIntent('edit_file', args),
  async execute(args, ctx) {
    // What the edit made of the file's bytes, set by the fs seam's read-and-replace.
    const seen: { edited?: ReturnType<typeof applyEdit> } = {};
    try {
      const file = await ctx.fs.realpath(args.path, { mustExist: true, forWrite: true });
      const outcome = await ctx.fs.update(file, { maxBytes: EDIT_MAX_BYTES, signal: ctx.signal }, (bytes) => {
        const edited = (seen.edited = applyEdit(bytes, args));
        return 'status' in edited ? undefined : Buffer.from(edited.after, 'utf8');
      });
      if (outcome === 'too-large') {
        return failure(BuiltinCode.FILE_TOO_LARGE, `"${args.path}" is larger than ${formatBytes(EDIT_MAX_BYTES)}; edit_file edits smaller files only.`);
      }
    } catch (err) {
      return fromRejection(err);
    }
    const edited = seen.edited!;
    if ('status' in edited) return edited;
    return ok(`Edited ${args.path} at line ${lineOf(edited.after, edited.start)}:\n${editContext(edited.after, edited.start, args.new_text.length)}`);
  },
};
