/**
 * What plugins log about themselves, beside the machines' entries: a hook
 * listener's problem (`hook/report`), an MCP server mounted (`mcp/server`),
 * the Agent Skills found (`skills/found`). Part of the one `Entry` union in
 * `entries.ts`.
 */
import { z } from 'zod';
import { CallId, envelope, StepId, TurnId } from './entry-values.js';

export const HookReport = z.strictObject({
  ...envelope,
  kind: z.literal('hook/report'),
  hook: z.string(),
  listener: z.string(),
  problem: z.string(),
  turn: TurnId.optional(),
  step: StepId.optional(),
  callId: CallId.optional(),
});

/**
 * An MCP server a row mounted (`mcp:<name>`), once it started or failed to: the tools it offers as
 * registered (with the class approval and scheduling read, which replay needs and the wire form does
 * not carry), what was left out and why, or why it failed. Written by the MCP plugin, never by a
 * machine; marked `ignorable` so a reader that does not know it may skip it.
 */
export const McpServer = z.strictObject({
  ...envelope,
  kind: z.literal('mcp/server'),
  /** The row id, `mcp:<name>`. */
  server: z.string(),
  /** `relisted`: the server announced a changed tool list (`notifications/tools/list_changed`); `tools` is the new list, offered from the next step on. */
  outcome: z.enum(['started', 'failed', 'relisted']),
  tools: z.array(z.strictObject({ name: z.string(), readOnly: z.boolean(), idempotent: z.boolean() })),
  /** Tools left out (a schema that cannot be read, a name the wire refuses), one line each. */
  problems: z.array(z.string()),
  /** For `failed`: `MCP_START_FAILED` (or `MCP_NAME_TAKEN`: another row has its tool prefix), and what happened. */
  code: z.string().optional(),
  message: z.string().optional(),
});

/**
 * What a process of the session found of Agent Skills (ADR 0064): each skill it lists in the prompt, and
 * a named warning (`SKILL_NAME_INVALID`, …) for each one it skipped or noted. Written by the
 * `prompt:skills` row before its first turn, only when there is something to say; marked `ignorable`.
 */
export const SkillsFound = z.strictObject({
  ...envelope,
  kind: z.literal('skills/found'),
  skills: z.array(z.strictObject({ name: z.string(), source: z.enum(['workspace', 'home']), path: z.string() })),
  warnings: z.array(z.strictObject({ code: z.string(), path: z.string(), message: z.string() })),
});
