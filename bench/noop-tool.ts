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

/**
 * The same, declared neither read-only nor idempotent: its dispatch is flushed before it runs and its result before
 * the step goes on (ADR 0072), so it measures what a call that must not run twice costs.
 */
export const noopOnceTool: ToolDefinition<{ n?: number }> = { ...noopTool, name: 'noop_once', description: 'Does nothing, but counts as a write.', readOnly: false, idempotent: false };

/** Read-only but not idempotent (as a delegation is): released with its read-only neighbours, flushed like a write. */
export const noopReadOnceTool: ToolDefinition<{ n?: number }> = { ...noopTool, name: 'noop_read_once', description: 'Does nothing, but may not run twice.', idempotent: false };
