/** `grep`: search file contents with a JavaScript regular expression. */
import { z } from 'zod';
import { FsIoError, readAtMost, type FileSystem, type FsPath } from '../ports/fs.js';
import { collectWalk, SKIPPED_DIRS } from './collect-walk.js';
import { createLineMatcher, type BatchEnd } from './grep-matcher.js';
import { grepIntent } from './presenters.js';
import { failure, fromRejection, fromToolError, ok, BuiltinCode } from './output.js';
import { clipLine, formatBytes, looksBinary, utf8 } from './text.js';
import { ToolError } from '../ports/tool-error.js';
import type { ToolContext, ToolOutput, ZodToolDefinition } from '../ports/tools.js';
import { ToolResultCode } from '../log/codes.js';

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

export function createGrepTool(options: GrepOptions = {}): ZodToolDefinition<GrepArgs> {
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
    presentResult: (args, result) => grepIntent(`/${args.pattern}/ in ${args.path ?? '.'}`, result),
    async execute(args, ctx) {
      try {
        new RegExp(args.pattern);
      } catch (err) {
        return failure(BuiltinCode.INVALID_PATTERN, `Invalid regular expression: ${(err as Error).message}`);
      }
      const shown = args.path ?? '.';
      let root: FsPath;
      try {
        root = await ctx.fs.realpath(shown, { mustExist: true });
      } catch (err) {
        return fromRejection(err);
      }
      // A timer and controller of our own, cleared on the way out: on Node 20 the source of
      // `AbortSignal.any([.., AbortSignal.timeout(ms)])` is only weakly held, a GC collects it
      // and the deadline never fires (the call then ran to the executor's 60 s).
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(), deadlineMs);
      try {
        return await search(args, ctx, root, shown, AbortSignal.any([ctx.signal, deadline.signal]), deadlineMs);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** The search itself, once the root is known; `signal` carries both the caller's abort and grep's own deadline. */
async function search(args: GrepArgs, ctx: ToolContext, root: FsPath, shown: string, signal: AbortSignal, deadlineMs: number): Promise<ToolOutput> {

  let files: FsPath[];
  let single = false;
  const notes: string[] = [];
  try {
    if ((await ctx.fs.stat(root)).kind === 'directory') {
      const walked = await collectWalk(ctx.fs, root, { skipDirs: SKIPPED_DIRS, maxEntries: GREP_MAX_FILES, includeSymlinks: false, signal });
      files = walked.entries;
      if (walked.stopped && !signal.aborted) notes.push(`[only the first ${GREP_MAX_FILES} files were searched]`);
    } else {
      files = [root];
      single = true;
    }
  } catch (err) {
    return fromRejection(err);
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
      const read = await readText(ctx.fs, file);
      if (read instanceof ToolError) {
        // A file the caller named is refused in words; one met on a walk is skipped.
        if (single) return fromToolError(read);
        continue;
      }
      if (read === 'too-large') tooLarge++;
      if (typeof read !== 'object') continue;
      batch.files.push({ rel: file.display, text: read.text });
      batch.chars += read.text.length;
      if (batch.chars >= BATCH_CHARS) end = await flush();
      if (!('done' in end)) break;
    }
    if ('done' in end && !signal.aborted && !capped) end = await flush();
  } finally {
    await matcher.close();
  }

  if ('failed' in end) return failure(BuiltinCode.GREP_FAILED, `grep could not run the pattern: ${end.failed}.`);
  if (capped) notes.push(`[stopped at ${GREP_MAX_MATCHES} matches; narrow the pattern or the path]`);
  if (tooLarge > 0) notes.push(`[${tooLarge} files over ${formatBytes(GREP_MAX_FILE_BYTES)} were not searched]`);
  if (ctx.signal.aborted) return failure(ToolResultCode.ABORTED, 'The grep call was aborted.');
  if (signal.aborted) {
    const found = hits.length === 0 ? 'No matches were found before that.' : `Matches found before that:\n${hits.join('\n')}`;
    return failure(
      BuiltinCode.GREP_TIMEOUT,
      `grep stopped after ${deadlineMs} ms without finishing. A pattern with nested repetition such as (a+)+ can take ` +
        `exponential time on some lines; simplify it, or narrow the path. ${found}${notes.length ? `\n${notes.join('\n')}` : ''}`,
    );
  }
  if (hits.length === 0) return ok([`No matches for /${args.pattern}/ in ${shown}.`, ...notes].join('\n'));
  return ok([...hits, ...notes].join('\n'));
}

/**
 * A file's text for searching, read through the fs seam (the matcher's
 * worker gets only this text); skipped as binary, too large or unreadable;
 * refused when it is no regular file in the workspace.
 */
async function readText(fs: FileSystem, file: FsPath): Promise<{ text: string } | 'binary' | 'too-large' | 'unreadable' | ToolError> {
  let bytes: Uint8Array | undefined;
  try {
    const opened = await fs.open(file);
    try {
      bytes = opened.size > GREP_MAX_FILE_BYTES ? undefined : await readAtMost(opened, GREP_MAX_FILE_BYTES);
    } finally {
      await opened.close();
    }
  } catch (err) {
    // What the file is or where it leads is a refusal, for the caller to word; a failure to read it only skips it.
    if (err instanceof ToolError && !(err instanceof FsIoError)) return err;
    return 'unreadable';
  }
  if (bytes === undefined) return 'too-large';
  if (looksBinary(bytes)) return 'binary';
  return { text: utf8(bytes) };
}

export const grepTool: ZodToolDefinition<GrepArgs> = createGrepTool();
