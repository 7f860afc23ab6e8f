/** `list_dir`: one directory's entries. */
import { z } from 'zod';
import { failure, fromRejection, ok } from './output.js';
import { byCodePoint } from '../ports/fs.js';
import type { ZodToolDefinition } from '../ports/tools.js';
import { FsCode } from '../ports/fs.js';

export const LIST_MAX_ENTRIES = 1000;

const parameters = z.strictObject({
  path: z.string().optional().describe('Directory path, relative to the workspace root. Default: the root.'),
});
export type ListDirArgs = z.infer<typeof parameters>;

export const listDirTool: ZodToolDefinition<ListDirArgs> = {
  name: 'list_dir',
  description:
    'List the entries of a directory in the workspace, sorted by name. Directories end in "/", symbolic links in "@".',
  parameters,
  readOnly: true,
  idempotent: true,
  timeoutMs: 30_000,
  present: (args) => `list_dir ${args.path ?? '.'}`,
  async execute(args, ctx) {
    const shown = args.path ?? '.';
    try {
      const dir = await ctx.fs.realpath(shown, { mustExist: true });
      if ((await ctx.fs.stat(dir)).kind !== 'directory') {
        return failure(FsCode.NOT_A_DIRECTORY, `"${shown}" is a file, not a directory; use read_file.`);
      }
      const names = (await ctx.fs.list(dir))
        .map((e) => (e.kind === 'directory' ? `${e.name}/` : e.kind === 'symlink' ? `${e.name}@` : e.name))
        .sort(byCodePoint);
      if (names.length === 0) return ok(`(empty directory: ${shown})`);
      const kept = names.slice(0, LIST_MAX_ENTRIES);
      const note =
        names.length > kept.length ? `\n[${names.length - kept.length} more entries not shown, of ${names.length}]` : '';
      return ok(kept.join('\n') + note);
    } catch (err) {
      return fromRejection(err);
    }
  },
};
