/** `write_file`: create or replace a whole file. */
import { z } from 'zod';
import { openForWrite, replaceContent, type OpenedForWrite } from './open-in-workspace.js';
import { fromToolError, fsFailure, ok } from './output.js';
import { ToolError, type ToolDefinition } from '../ports/tools.js';
import { resolveInWorkspace } from './workspace.js';

const parameters = z.strictObject({
  path: z.string().describe('File path, relative to the workspace root. Missing parent directories are created.'),
  content: z.string().describe('The complete new content of the file.'),
});
export type WriteFileArgs = z.infer<typeof parameters>;

export const writeFileTool: ToolDefinition<WriteFileArgs> = {
  name: 'write_file',
  description:
    'Write a file in the workspace, replacing it if it exists. Prefer edit_file for small changes to existing files.',
  parameters,
  readOnly: false,
  idempotent: true,
  timeoutMs: 30_000,
  present: (args) => `write_file ${args.path} (${Buffer.byteLength(args.content)} bytes)`,
  async execute(args, ctx) {
    const file = await resolveInWorkspace(ctx, args.path, { forWrite: true });
    if (file instanceof ToolError) return fromToolError(file);
    let opened: OpenedForWrite | ToolError | undefined;
    try {
      opened = await openForWrite(ctx, file, args.path);
      if (opened instanceof ToolError) return fromToolError(opened);
      const bytes = Buffer.from(args.content, 'utf8');
      await replaceContent(opened.handle, bytes, ctx.signal);
      return ok(`${opened.created ? 'Created' : 'Overwrote'} ${args.path} (${bytes.length} bytes written).`);
    } catch (err) {
      return fsFailure(err, args.path);
    } finally {
      if (opened !== undefined && !(opened instanceof ToolError)) await opened.handle.close();
    }
  },
};
