/** `write_file`: create or replace a whole file. */
import { z } from 'zod';
import { fromRejection, ok } from './output.js';
import type { ZodToolDefinition } from '../ports/tools.js';
import { diffIntent } from './presenters.js';

const parameters = z.strictObject({
  path: z.string().describe('File path, relative to the workspace root. Missing parent directories are created.'),
  content: z.string().describe('The complete new content of the file.'),
});
export type WriteFileArgs = z.infer<typeof parameters>;

export const writeFileTool: ZodToolDefinition<WriteFileArgs> = {
  name: 'write_file',
  description:
    'Write a file in the workspace, replacing it if it exists. Prefer edit_file for small changes to existing files.',
  parameters,
  readOnly: false,
  confinement: 'workspace',
  idempotent: true,
  timeoutMs: 30_000,
  present: (args) => `write_file ${args.path} (${Buffer.byteLength(args.content)} bytes)`,
  presentResult: (args) => diffIntent('write_file', args),
  async execute(args, ctx) {
    try {
      const file = await ctx.fs.realpath(args.path, { forWrite: true });
      const bytes = Buffer.from(args.content, 'utf8');
      const { created } = await ctx.fs.write(file, bytes, ctx.signal);
      return ok(`${created ? 'Created' : 'Overwrote'} ${args.path} (${bytes.length} bytes written).`);
    } catch (err) {
      return fromRejection(err);
    }
  },
};
