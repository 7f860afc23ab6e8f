/** Checks a model's tool call before anything runs (I4). Pure. */
import { z } from 'zod';
import type { ToolDefinition } from '../ports/tools.js';
import { codes, type CodeOf } from '../log/codes.js';
import { checkerOf } from './schema.js';

/** Why a call was refused before it ran (I4): its `tool/result`'s code. */
export const CallValidationCode = codes({
  UNKNOWN_TOOL: 'The model called a tool the session does not offer.',
  INVALID_JSON: 'The arguments are not JSON.',
  INVALID_ARGUMENTS: 'The arguments do not fit the tool\'s parameters.',
});
export type CallValidationCode = CodeOf<typeof CallValidationCode>;

export type CallValidation =
  | { ok: true; tool: ToolDefinition; args: unknown }
  | { ok: false; code: CallValidationCode; message: string };

const EXCERPT_CHARS = 200;

function findTool(tools: ReadonlyMap<string, ToolDefinition> | readonly ToolDefinition[], name: string) {
  if (tools instanceof Map) return tools.get(name);
  return (tools as readonly ToolDefinition[]).find((t) => t.name === name);
}

function toolNames(tools: ReadonlyMap<string, ToolDefinition> | readonly ToolDefinition[]): string[] {
  return tools instanceof Map ? [...tools.keys()] : (tools as readonly ToolDefinition[]).map((t) => t.name);
}

function excerpt(text: string): string {
  return text.length <= EXCERPT_CHARS ? text : `${text.slice(0, EXCERPT_CHARS)}… (${text.length} chars)`;
}

/**
 * Resolves a call's tool by name and parses its arguments against the tool's schema.
 * Empty (or all-whitespace) arguments text counts as `{}`: some models send that for a no-argument call.
 *
 * Contract: pure and never throws; every rejection carries a message meant for the model.
 */
export function validateCall(
  tools: ReadonlyMap<string, ToolDefinition> | readonly ToolDefinition[],
  name: string,
  argumentsText: string,
): CallValidation {
  const tool = findTool(tools, name);
  if (tool === undefined) {
    const available = toolNames(tools);
    return {
      ok: false,
      code: CallValidationCode.UNKNOWN_TOOL,
      message: `Unknown tool "${name}". Available tools: ${available.length > 0 ? available.join(', ') : '(none)'}.`,
    };
  }

  let raw: unknown;
  if (argumentsText.trim() === '') raw = {};
  else {
    try {
      raw = JSON.parse(argumentsText);
    } catch (err) {
      return {
        ok: false,
        code: CallValidationCode.INVALID_JSON,
        message: `The arguments for ${name} are not valid JSON (${(err as Error).message}). Received: ${excerpt(argumentsText)}`,
      };
    }
  }

  const parsed = checkerOf(tool.parameters).safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      code: CallValidationCode.INVALID_ARGUMENTS,
      message: `Invalid arguments for ${name}:\n${z.prettifyError(parsed.error)}`,
    };
  }
  return { ok: true, tool, args: parsed.data };
}
