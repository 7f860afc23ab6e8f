/** The built-in tools and their wire form. */
import { wireSchema } from './schema.js';
import { bashTool } from './bash.js';
import { editFileTool } from './edit-file.js';
import { globTool } from './glob.js';
import { grepTool } from './grep.js';
import { listDirTool } from './list-dir.js';
import { readFileTool } from './read-file.js';
import type { ToolDefinition, ZodToolDefinition } from '../ports/tools.js';
import { updatePlanTool } from './update-plan.js';
import { writeFileTool } from './write-file.js';

/** The built-in tools, in the order they are offered to the model. */
export function builtinTools(): ZodToolDefinition[] {
  return [readFileTool, writeFileTool, editFileTool, listDirTool, globTool, grepTool, bashTool];
}

/** The built-in tools `base` leaves out, which a row offers (`{ id: 'tool:update_plan', use: 'update_plan' }`). */
export function optionalTools(): ZodToolDefinition[] {
  return [updatePlanTool];
}

/** Every built-in tool, by name: the presenters of a surface that draws a log without its session's registry. */
export function knownToolLookup(): ReadonlyMap<string, ToolDefinition> {
  return new Map([...builtinTools(), ...optionalTools()].map((t) => [t.name, t]));
}

/** What the model is told about a tool. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Contract: pure; the result holds exactly `name`, `description`, `parameters` (I7), with no `$schema` key. */
export function toolSpec(def: ToolDefinition): ToolSpec {
  return { name: def.name, description: def.description, parameters: wireSchema(def.parameters) };
}
