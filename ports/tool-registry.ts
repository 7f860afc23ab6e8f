/** The `tools` service's port: the tools a session offers, registered by plugins (each `tool:<name>` row, MCP servers, user plugins). */
import type { ToolDefinition } from './tools.js';

export type Disposer = () => void;

export interface ToolRegistry {
  /** Contract: throws `DuplicateToolError` naming both owners if the name is taken; the disposer is idempotent. */
  register(tool: ToolDefinition, owner: string): Disposer;
  get(name: string): ToolDefinition | undefined;
  /** In registration order. */
  list(): readonly ToolDefinition[];
  /** Bumped by every change, so a reader can cache what it derived from `list()`. */
  readonly version: number;
}

export class DuplicateToolError extends Error {
  constructor(
    readonly tool: string,
    readonly first: string,
    readonly second: string,
  ) {
    super(`tool ${tool} is registered twice: by ${first} and by ${second}`);
    this.name = 'DuplicateToolError';
  }
}
