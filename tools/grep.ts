/** `grep`: search file contents with a JavaScript regular expression. */
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { createLineMatcher, type BatchEnd } from './grep-matcher.js';
import { openForRead, readAtMost, type OpenContext } from './open-in-workspace.js';
import { failure, fromToolError, fsFailure, ok } from './output.js';
import { clipLine, formatBytes, looksBinary } from './text.js';
import { ToolError, type ToolDefinition } from '../ports/tools.js';
import { SKIPPED_DIRS, walkFiles } from './walk.js';
import { bridleHomeForms, displayPath, resolveInWorkspace } from './workspace.js';

export const GREP_MAX_MATCHES = 500;
export const GREP_MAX_FILES = 50_000;
export const GREP_MAX_FILE_BYTES = 4 * 1024 * 1024;
const GREP_MAX_LINE_CHARS = 300;
/** The whole search, walk included, must end by then: well before the executor's `timeoutMs`, so the model reads why. */
export const GREP_DEADLINE_MS = 30_000;
/** Files go to the matcher in batches of about this many characters: one message there per batch, one back per file with matches. */
const BATCH_CHARS = 1024 * 1024;

const parameters = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe('JavaScript regular expression, without slashes or flags, e.g. "function\\s+\\w+" or "[Tt]odo".'),
  path: z.string().optional().describe('File or directory to search, relative to the workspace root. Default: the root.'),
});
export type GrepArgs = z.infer<typeof parameters>;

export interface GrepOptions {
  /** Default `GREP_DEADLINE_MS`. */
  deadlineMs?: number;
}

interface Batch {
  files: { rel: string; text: string }[];
  chars: number;
}

export function createGrepTool(options: GrepOptions = {}): ToolDefinition<GrepArgs> {
  const deadlineMs = options.deadlineMs ?? GREP_DEADLINE_MS;
  return {
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
      try {
        new RegExp(args.pattern);
      } catch (err) {
        return failure('INVALID_PATTERN', `Invalid regular expression: ${(err as Error).message}`);
      }
      const shown = args.path ?? '.';
      const root = await resolveInWorkspace(ctx, shown, { mustExist: true });
      if (root instanceof ToolError) return fromToolError(root);
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(deadlineMs)]);

      const homes = await bridleHomeForms(ctx.bridleHome);
      let files: string[];
      let single = false;
      const notes: string[] = [];
      try {
        if ((await stat(root)).isDirectory()) {
          const walked = await walkFiles(root, {
            skipDirs: new Set(SKIPPED_DIRS),
            excludeRoots: homes,
            maxEntries: GREP_MAX_FILES,
            includeSymlinks: false,
            signal,
          });
          files = walked.paths;
          if (walked.stopped && !signal.aborted) notes.push(`[only the first ${GREP_MAX_FILES} files were searched]`);
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
      const matcher = createLineMatcher(args.pattern);
      const batch: Batch = { files: [], chars: 0 };
      const flush = async (): Promise<BatchEnd> => {
        const sent = batch.files.splice(0);
        batch.chars = 0;
        if (sent.length === 0) return { done: true };
        // One more than fits, so a full result can tell "exactly enough" from "more were there".
        const budget = GREP_MAX_MATCHES - hits.length + 1;
        return matcher.match(sent.map((f) => f.text), budget, signal, (file, lines) => {
          const { rel, text } = sent[file]!;
          const all = text.split(/\r?\n/);
          for (const l of lines) {
            if (hits.length >= GREP_MAX_MATCHES) {
              capped = true;
              return;
            }
            hits.push(`${rel}:${l + 1}: ${clipLine(all[l]!, GREP_MAX_LINE_CHARS)}`);
          }
        });
      };

      let end: BatchEnd = { done: true };
      try {
        for (const file of files) {
          if (signal.aborted || capped) break;
          const read = await readText({ ...ctx, homes }, file, single ? shown : displayPath(ctx.workspace, file));
          if (read instanceof ToolError) {
            // A file the caller named is refused in words; one met on a walk is skipped.
            if (single) return fromToolError(read);
            continue;
          }
          if (read === 'too-large') tooLarge++;
          if (typeof read !== 'object') continue;
          batch.files.push({ rel: displayPath(ctx.workspace, file), text: read.text });
          batch.chars += read.text.length;
          if (batch.chars >= BATCH_CHARS) end = await flush();
          if (!('done' in end)) break;
        }
        if ('done' in end && !signal.aborted && !capped) end = await flush();
      } finally {
        await matcher.close();
      }

      if ('failed' in end) return failure('GREP_FAILED', `grep could not run the pattern: ${end.failed}.`);
      if (capped) notes.push(`[stopped at ${GREP_MAX_MATCHES} matches; narrow the pattern or the path]`);
      if (tooLarge > 0) notes.push(`[${tooLarge} files over ${formatBytes(GREP_MAX_FILE_BYTES)} were not searched]`);
      if (ctx.signal.aborted) return failure('ABORTED', 'The grep call was aborted.');
      if (signal.aborted) {
        const found = hits.length === 0 ? 'No matches were found before that.' : `Matches found before that:\n${hits.join('\n')}`;
        return failure(
          'GREP_TIMEOUT',
          `grep stopped after ${deadlineMs} ms without finishing. A pattern with nested repetition such as (a+)+ can take ` +
            `exponential time on some lines; simplify it, or narrow the path. ${found}${notes.length ? `\n${notes.join('\n')}` : ''}`,
        );
      }
      if (hits.length === 0) return ok([`No matches for /${args.pattern}/ in ${shown}.`, ...notes].join('\n'));
      return ok([...hits, ...notes].join('\n'));
    },
  };
}

/** A file's text for searching; skipped as binary or too large; refused when it is no regular file in the workspace. */
async function readText(ctx: OpenContext, file: string, shown: string): Promise<{ text: string } | 'binary' | 'too-large' | 'unreadable' | ToolError> {
  let bytes: Buffer | undefined;
  try {
    const opened = await openForRead(ctx, file, shown);
    if (opened instanceof ToolError) return opened;
    try {
      bytes = opened.size > GREP_MAX_FILE_BYTES ? undefined : await readAtMost(opened.handle, GREP_MAX_FILE_BYTES, opened.size);
    } finally {
      await opened.handle.close();
    }
  } catch {
    return 'unreadable';
  }
  if (bytes === undefined) return 'too-large';
  if (looksBinary(bytes)) return 'binary';
  return { text: bytes.toString('utf8') };
}

export const grepTool: ToolDefinition<GrepArgs> = createGrepTool();
