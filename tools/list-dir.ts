/** `list_dir`: one directory's entries. */
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { readDirExactly } from './open-in-workspace.js';
import { failure, fromToolError, fsFailure, ok } from './output.js';
import { byCodePoint } from './text.js';
import { ToolError, type ToolDefinition } from '../ports/tools.js';
import { resolveInWorkspace } from './workspace.js';

export const LIST_MAX_ENTRIES = 1000;

const parameters = z.strictObject({
  path: z.string().optional().describe('Directory path, relative to the workspace root. Default: the root.'),
});
export type ListDirArgs = z.infer<typeof parameters>;

export const listDirTool: ToolDefinition<ListDirArgs> = {
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
    const dir = await resolveInWorkspace(ctx, shown, { mustExist: true });
    if (dir instanceof ToolError) return fromToolError(dir);
    try {
      if (!(await stat(dir)).isDirectory()) {
        return failure('NOT_A_DIRECTORY', `"${shown}" is a file, not a directory; use read_file.`);
      }
      const entries = await readDirExactly(dir);
      if (entries === undefined) {
        return failure('PATH_CHANGED', `"${shown}" changed while it was being listed (it is no longer the directory that was checked).`);
      }
      const names = entries
        .map((e) => (e.isDirectory() ? `${e.name}/` : e.isSymbolicLink() ? `${e.name}@` : e.name))
        .sort(byCodePoint);
      if (names.length === 0) return ok(`(empty directory: ${shown})`);
      const kept = names.slice(0, LIST_MAX_ENTRIES);
      const note =
        names.length > kept.length ? `\n[${names.length - kept.length} more entries not shown, of ${names.length}]` : '';
      return ok(kept.join('\n') + note);
    } catch (err) {
      return fsFailure(err, shown);
    }
  },
};
