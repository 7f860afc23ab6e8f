/** `grep`: search file contents with a JavaScript regular expression. */
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { openForRead, readAtMost } from './open-in-workspace.js';
import { failure, fromToolError, fsFailure, ok } from './output.js';
import { clipLine, formatBytes, looksBinary } from './text.js';
import { ToolError, type ToolDefinition } from './types.js';
import { SKIPPED_DIRS, walkFiles } from './walk.js';
import { bridleHomeForms, displayPath, resolveInWorkspace } from './workspace.js';

export const GREP_MAX_MATCHES = 500;
export const GREP_MAX_FILES = 50_000;
export const GREP_MAX_FILE_BYTES = 4 * 1024 * 1024;
const GREP_MAX_LINE_CHARS = 300;

const parameters = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe('JavaScript regular expression, without slashes or flags, e.g. "function\\s+\\w+" or "[Tt]odo".'),
  path: z.string().optional().describe('File or directory to search, relative to the workspace root. Default: the root.'),
});
export type GrepArgs = z.infer<typeof parameters>;

export const grepTool: ToolDefinition<GrepArgs> = {
  name: 'grep',
  description:
    'Search file contents for a regular expression. Prints "file:line: text" for each matching line, sorted by ' +
    'file and line. Skips binary files, node_modules and .git.',
  parameters,
  readOnly: true,
  idempotent: true,
  timeoutMs: 60_000,
  present: (args) => `grep /${args.pattern}/ in ${args.path ?? '.'}`,
  async execute(args, ctx) {
    let regexp: RegExp;
    try {
      regexp = new RegExp(args.pattern);
    } catch (err) {
      return failure('INVALID_PATTERN', `Invalid regular expression: ${(err as Error).message}`);
    }
    const shown = args.path ?? '.';
    const root = await resolveInWorkspace(ctx, shown, { mustExist: true });
    if (root instanceof ToolError) return fromToolError(root);

    let files: string[];
    let single = false;
    const notes: string[] = [];
    try {
      if ((await stat(root)).isDirectory()) {
        const walked = await walkFiles(root, {
          skipDirs: new Set(SKIPPED_DIRS),
          excludeRoots: await bridleHomeForms(ctx.bridleHome),
          maxEntries: GREP_MAX_FILES,
          includeSymlinks: false,
          signal: ctx.signal,
        });
        files = walked.paths;
        if (walked.stopped) notes.push(`[only the first ${GREP_MAX_FILES} files were searched]`);
      } else {
        files = [root];
        single = true;
      }
    } catch (err) {
      return fsFailure(err, shown);
    }

    const hits: string[] = [];
    let tooLarge = 0;
    let capped = false;
    for (const file of files) {
      if (ctx.signal.aborted || capped) break;
      let bytes: Buffer | undefined;
      try {
        const opened = await openForRead(ctx, file, single ? shown : displayPath(ctx.workspace, file));
        // A file the caller named is refused in words; one met on a walk is skipped.
        if (opened instanceof ToolError) {
          if (single) return fromToolError(opened);
          continue;
        }
        try {
          bytes = opened.size > GREP_MAX_FILE_BYTES ? undefined : await readAtMost(opened.handle, GREP_MAX_FILE_BYTES);
        } finally {
          await opened.handle.close();
        }
      } catch {
        continue;
      }
      if (bytes === undefined) {
        tooLarge++;
        continue;
      }
      if (looksBinary(bytes)) continue;
      const rel = displayPath(ctx.workspace, file);
      const lines = bytes.toString('utf8').split(/\r?\n/);
      if (lines.at(-1) === '') lines.pop();
      for (let i = 0; i < lines.length; i++) {
        if (!regexp.test(lines[i]!)) continue;
        if (hits.length >= GREP_MAX_MATCHES) {
          capped = true;
          break;
        }
        hits.push(`${rel}:${i + 1}: ${clipLine(lines[i]!, GREP_MAX_LINE_CHARS)}`);
      }
    }
    if (capped) notes.push(`[stopped at ${GREP_MAX_MATCHES} matches; narrow the pattern or the path]`);
    if (tooLarge > 0) notes.push(`[${tooLarge} files over ${formatBytes(GREP_MAX_FILE_BYTES)} were not searched]`);
    if (hits.length === 0) return ok([`No matches for /${args.pattern}/ in ${shown}.`, ...notes].join('\n'));
    return ok([...hits, ...notes].join('\n'));
  },
};
