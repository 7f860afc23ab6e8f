/** The benchmarks' tool: does nothing, so what is measured is the harness. */
import { z } from 'zod';
import type { ToolDefinition } from '../ports/tools.js';

export const noopTool: ToolDefinition<{ n?: number }> = {
  name: 'noop',
  description: 'Does nothing.',
  parameters: z.strictObject({ n: z.number().optional() }),
  readOnly: true,
  idempotent: true,
  execute: async () => ({ status: 'ok', content: 'ok' }),
  present: () => 'noop',
};
