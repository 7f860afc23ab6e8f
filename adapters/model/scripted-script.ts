/**
 * The scripted model's file format (see `SCRIPTED.md`):
 *
 * ```json
 * {
 *   "label": "scripted: fix the failing checkout test",
 *   "model": "optional display name",
 *   "responses": [
 *     { "reasoning": "optional", "text": "optional",
 *       "toolCalls": [{ "name": "read_file", "arguments": { "path": "a.ts" } }],
 *       "finish": "stop | tool-calls | length | content-filter (default: tool-calls if toolCalls else stop)",
 *       "usage": { "inputTokens": 1, "outputTokens": 2 } },
 *     { "error": { "code": "RATE_LIMIT", "message": "…", "retryAfterMs": 10 } }
 *   ]
 * }
 * ```
 *
 * Each response answers one model request, in order; a response with
 * `match` waits for a request whose first user message contains it (the
 * subagents of a workflow or of parallel delegate calls ask in no fixed
 * order). `arguments` is an
 * object (sent as `JSON.stringify` of it) or a string (sent verbatim, so
 * malformed JSON can be scripted). Unknown keys are refused, so a typo such
 * as `tool_calls` is an error rather than a silently empty answer.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { FinishReason, ModelErrorCode, Usage } from '../../log/entry-values.js';

export const ScriptedToolCall = z.strictObject({
  name: z.string().min(1),
  arguments: z
    .union([z.string(), z.record(z.string(), z.unknown())], { error: 'arguments must be a JSON object or a string' })
    .optional(),
});

export const ScriptedError = z.strictObject({
  code: ModelErrorCode,
  message: z.string().optional(),
  status: z.int().optional(),
  retryAfterMs: z.number().nonnegative().optional(),
});

/** One answer, or one failure (`error` alone). */
export const ScriptedResponse = z
  .strictObject({
    reasoning: z.string().optional(),
    text: z.string().optional(),
    toolCalls: z.array(ScriptedToolCall).optional(),
    finish: FinishReason.optional(),
    usage: Usage.optional(),
    error: ScriptedError.optional(),
    /** Answers the first request whose first user message contains this text (a subagent's task), whenever it comes. */
    match: z.string().min(1).optional(),
  })
  .refine((r) => r.error === undefined || Object.keys(r).filter((k) => k !== 'match').length === 1, {
    message: 'an "error" response cannot also carry reasoning, text, toolCalls, finish or usage',
  });
export type ScriptedResponse = z.infer<typeof ScriptedResponse>;

export const Script = z.strictObject({
  /** Shown wherever the script's output appears; the provider makes sure it says "scripted". */
  label: z.string().min(1).optional(),
  model: z.string().optional(),
  responses: z.array(ScriptedResponse),
});
export type Script = z.infer<typeof Script>;

/** A script file that cannot be used; the message names the file and the problem. */
export class ScriptError extends Error {
  override name = 'ScriptError';
}

/** Contract: returns a valid script or throws a `ScriptError` naming the problem. */
export function parseScript(value: unknown, source = 'script'): Script {
  const parsed = Script.safeParse(value);
  if (!parsed.success) throw new ScriptError(`${source} is not a valid scripted-model script:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** Reads and validates a script file. Contract: throws only `ScriptError`. */
export function loadScript(path: string): Script {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ScriptError(`cannot read script ${path}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ScriptError(`script ${path} is not valid JSON: ${(err as Error).message}`);
  }
  return parseScript(json, `script ${path}`);
}
