/** `read_file`: a text file with numbered lines, a window at a time. */
import { z } from 'zod';
import { FsCode, type FileHandle } from '../ports/fs.js';
import { failure, fromRejection, ok, BuiltinCode } from './output.js';
import { scanLines } from './scan-lines.js';
import { BINARY_SNIFF_BYTES, formatBytes, looksBinary, numberLines } from './text.js';
import { ToolError } from '../ports/tool-error.js';
import type { ZodToolDefinition } from '../ports/tools.js';

export const READ_MAX_LINES = 2000;
export const READ_MAX_BYTES = 256 * 1024;
export const READ_MAX_LINE_CHARS = 2000;
/** Past this size, lines after the window are not counted (the total would cost a full scan). */
const COUNT_ALL_UP_TO_BYTES = 32 * 1024 * 1024;

const parameters = z.strictObject({
  path: z.string().describe('File path, relative to the workspace root (or absolute inside it).'),
  offset: z.number().int().min(1).max(1e9).optional().describe('1-based line number to start from. Default 1.'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(1e9)
    .optional()
    .describe(`How many lines to return. Default: the rest of the file, up to ${READ_MAX_LINES} lines / 256 KiB.`),
});
export type ReadFileArgs = z.infer<typeof parameters>;

interface Window {
  lines: string[];
  /** Total line count, or undefined when the file was too big to count. */
  total: number | undefined;
  cutBy: 'lines' | 'bytes' | undefined;
}

async function readWindow(file: FileHandle, first: number, limit: number | undefined, size: number, signal: AbortSignal): Promise<Window> {
  const want = Math.min(limit ?? READ_MAX_LINES, READ_MAX_LINES);
  const lines: string[] = [];
  let bytes = 0;
  let cutBy: Window['cutBy'];
  const scanned = await scanLines(
    file,
    READ_MAX_LINE_CHARS,
    {
      start(n) {
        if (n < first) return 'count';
        if (lines.length < want && cutBy !== 'bytes') return 'keep';
        if (cutBy === undefined && want < (limit ?? Infinity)) cutBy = 'lines';
        return size > COUNT_ALL_UP_TO_BYTES ? 'stop' : 'count';
      },
      kept(_n, head, length) {
        const shown = length > READ_MAX_LINE_CHARS ? `${head}… [${length - READ_MAX_LINE_CHARS} more characters]` : head;
        const cost = Buffer.byteLength(shown) + 8;
        if (bytes + cost > READ_MAX_BYTES && lines.length > 0) {
          cutBy = 'bytes';
          return;
        }
        lines.push(shown);
        bytes += cost;
      },
    },
    signal,
  );
  return { lines, total: scanned.stopped ? undefined : scanned.lines, cutBy };
}

export const readFileTool: ZodToolDefinition<ReadFileArgs> = {
  name: 'read_file',
  description:
    'Read a text file from the workspace. Lines come prefixed with their 1-based line number and a tab ' +
    '(the prefix is not part of the file). Use offset and limit to page through long files.',
  parameters,
  readOnly: true,
  idempotent: true,
  timeoutMs: 30_000,
  present: (args) => {
    const from = args.offset ?? 1;
    const range = args.offset || args.limit ? `:${from}-${args.limit ? from + args.limit - 1 : ''}` : '';
    return `read_file ${args.path}${range}`;
  },
  async execute(args, ctx) {
    let opened: FileHandle | undefined;
    let window: Window;
    try {
      const file = await ctx.fs.realpath(args.path, { mustExist: true });
      opened = await ctx.fs.open(file);
      const head = await opened.read(0, Math.min(opened.size, BINARY_SNIFF_BYTES));
      if (looksBinary(head)) {
        return failure(BuiltinCode.BINARY_FILE, `"${args.path}" is a binary file (${formatBytes(opened.size)}); read_file shows text only.`);
      }
      window = await readWindow(opened, args.offset ?? 1, args.limit, opened.size, ctx.signal);
    } catch (err) {
      if (err instanceof ToolError && err.code === FsCode.IS_A_DIRECTORY) return failure(FsCode.IS_A_DIRECTORY, `"${args.path}" is a directory; use list_dir.`);
      return fromRejection(err);
    } finally {
      await opened?.close();
    }

    const first = args.offset ?? 1;
    const size = opened.size;
    const { lines, total, cutBy } = window;
    if (total === 0) return ok(`(empty file: ${args.path})`);
    if (lines.length === 0) {
      return failure(BuiltinCode.OFFSET_OUT_OF_RANGE, `offset ${first} is past the end of "${args.path}" (${total} lines).`);
    }
    const last = first + lines.length - 1;
    let text = numberLines(lines, first);
    if (total === undefined || last < total) {
      const of = total === undefined ? `of a ${formatBytes(size)} file` : `of ${total}`;
      const why =
        cutBy === 'lines' ? `, cut at ${READ_MAX_LINES} lines` : cutBy === 'bytes' ? ', cut at 256 KiB' : '';
      text += `\n[showing lines ${first}-${last} ${of}${why}; use offset=${last + 1} to read on]`;
    }
    return ok(text);
  },
};
