/**
 * The MCP tasks extension's vocabulary (`io.modelcontextprotocol/tasks`,
 * SEP-2663), shared by both of bridle's sides: the client that follows a
 * server's tasks (`adapters/mcp/tasks-extension.ts`, ADR 0084) and `bridle
 * mcp`, which serves `bridle_run` as one (`server/mcp/tasks.ts`, ADR 0083).
 */

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** A task's states, as the extension names them. */
export const TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Contract: pure. Whether a peer's capabilities (either side's) declare the extension. */
export function declaresTasksExtension(capabilities: unknown): boolean {
  const ext = typeof capabilities === 'object' && capabilities !== null ? (capabilities as { extensions?: unknown }).extensions : undefined;
  return typeof ext === 'object' && ext !== null && !Array.isArray(ext) && (ext as Record<string, unknown>)[TASKS_EXTENSION] !== undefined;
}
