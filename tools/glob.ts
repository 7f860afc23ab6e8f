/** `glob`: find files by name pattern. */
import path from 'node:path';
import { z } from 'zod';
import { globToRegExp } from './glob-pattern.js';
import { collectWalk, SKIPPED_DIRS, type Collected } from './collect-walk.js';
import { failure, fromRejection, ok, BuiltinCode } from './output.js';
import { globIntent } from './presenters.js';
import type { ZodToolDefinition } from '../ports/tools.js';

export const GLOB_MAX_RESULTS = 1000;
/** Bound on the files examined, so a pattern over a giant tree still answers. */
export const GLOB_MAX_SCANNED = 200_000;

const parameters = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe(
      'Glob relative to the workspace root, e.g. "**/*.ts", "src/**/test_*.py", "*.{json,yaml}". ' +
        'Supports **, *, ?, {a,b} and [abc]. node_modules and .git are skipped unless the pattern names them.',
    ),
});
export type GlobArgs = z.infer<typeof parameters>;

/** True when `pattern` spells `name` as a whole segment (`.git/*`, `{src,node_modules}/**`), not `.github`. */
function namesSegment(pattern: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[/{,])${escaped}($|[/},])`).test(pattern);
}

export const globTool: ZodToolDefinition<GlobArgs> = {
  name: 'glob',
  description: 'Find files in the workspace whose relative path matches a glob pattern. Returns sorted paths.',
  parameters,
  readOnly: true,
  idempotent: true,
  timeoutMs: 60_000,
  present: (args) => `glob ${args.pattern}`,
  presentResult: (args, result) => globIntent(args.pattern, result),
  async execute(args, ctx) {
    const pattern = args.pattern.replace(/^(\.\/)+/, '');
    if (path.isAbsolute(pattern) || pattern.split('/').includes('..')) {
      return failure(BuiltinCode.INVALID_PATTERN, `Glob "${args.pattern}" must be relative to the workspace and must not use "..".`);
    }
    const matcher = globToRegExp(pattern);
    const skipDirs = SKIPPED_DIRS.filter((name) => !namesSegment(pattern, name));
    let walked: Collected;
    try {
      walked = await collectWalk(ctx.fs, ctx.fs.root, { skipDirs, maxEntries: GLOB_MAX_SCANNED, includeSymlinks: true, signal: ctx.signal });
    } catch (err) {
      return fromRejection(err);
    }
    const matches = walked.entries.map((e) => e.display).filter((rel) => matcher.test(rel));
    const notes: string[] = [];
    if (walked.stopped) notes.push(`[search stopped after scanning ${GLOB_MAX_SCANNED} files; results may be incomplete]`);
    if (matches.length === 0) return ok([`No files match "${args.pattern}".`, ...notes].join('\n'));
    const shown = matches.slice(0, GLOB_MAX_RESULTS);
    if (matches.length > shown.length) {
      notes.push(`[${matches.length - shown.length} more matches not shown, of ${matches.length}; narrow the pattern]`);
    }
    return ok([...shown, ...notes].join('\n'));
  },
};
