/**
 * A call and its logged result as a render intent (ADR 0067), the one place
 * every surface gets it from: the CLI transcript, the viewer (live, through
 * `session/entry`, and replayed, embedded by `bridle replay --html`) and ACP.
 * A function of the logged arguments and result and the tool's presenters
 * only, so two replays of one log render the same bytes. A tool with only
 * `present` (every plugin written before presenters) shows as `generic`.
 */
import { z } from 'zod';
import type { IntentBody, LoggedResult, RenderIntent } from '../ports/present.js';
import type { ToolDefinition } from '../ports/tools.js';
import { DiffLine } from './diff.js';
import { checkerOf } from './schema.js';
import { PlanStepSchema } from './update-plan.js';

/** Where a renderer finds a call's tool: the session's live registry, or the built-ins. */
export type ToolLookup = Pick<ReadonlyMap<string, ToolDefinition>, 'get'>;

const base = { title: z.string(), status: z.string(), code: z.string().optional() };
/** The intent as data on the wire (`session/entry.intent`) and in a replay page; a presenter's answer is checked against it. */
export const RenderIntentSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('generic'), text: z.string(), ...base }),
  z.strictObject({ kind: z.literal('terminal'), command: z.string(), exitCode: z.int().nullable(), output: z.string(), ...base }),
  z.strictObject({ kind: z.literal('diff'), path: z.string(), oldText: z.string().nullable(), newText: z.string(), lines: z.array(DiffLine), ...base }),
  z.strictObject({ kind: z.literal('plan'), entries: z.array(PlanStepSchema), ...base }),
  z.strictObject({ kind: z.literal('search'), query: z.string(), matches: z.array(z.strictObject({ path: z.string(), line: z.int().positive().optional(), text: z.string().optional() })), notes: z.array(z.string()), ...base }),
]);

type Parsed = { ok: true; args: unknown } | { ok: false };

function parseFor(tool: ToolDefinition, raw: string): Parsed {
  try {
    const parsed = checkerOf(tool.parameters).safeParse(JSON.parse(raw || '{}'));
    return parsed.success ? { ok: true, args: parsed.data } : { ok: false };
  } catch {
    return { ok: false };
  }
}

function titleFor(tool: ToolDefinition | undefined, name: string, raw: string, parsed: Parsed): string {
  if (!tool || !parsed.ok) return `${name} ${raw}`;
  try {
    const t = tool.present(parsed.args);
    return typeof t === 'string' ? t : `${name} ${raw}`;
  } catch {
    return `${name} ${raw}`;
  }
}

/** Contract: never throws; a call as its tool's `present` renders it, or `name arguments` (no tool, arguments not its own, a presenter that throws). */
export function presentCall(tools: ToolLookup, name: string, raw: string): string {
  const tool = tools.get(name);
  return titleFor(tool, name, raw, tool ? parseFor(tool, raw) : { ok: false });
}

function bodyFor(tool: ToolDefinition | undefined, parsed: Parsed, result: LoggedResult): IntentBody | undefined {
  if (!tool?.presentResult || !parsed.ok) return undefined;
  try {
    return tool.presentResult(parsed.args, { status: result.status, content: result.content, ...(result.code !== undefined ? { code: result.code } : {}) });
  } catch {
    return undefined;
  }
}

/**
 * Contract: never throws; pure given pure presenters. The intent of a call
 * (`name`, its logged `raw` arguments) with its logged `result`: the tool's
 * `presentResult` when it gives a well-formed intent, else `generic` with the
 * result's content. The title is always `present`'s line, the status and code the result's.
 */
export function presentResult(tools: ToolLookup, name: string, raw: string, result: LoggedResult): RenderIntent {
  const tool = tools.get(name);
  const parsed = tool ? parseFor(tool, raw) : ({ ok: false } as const);
  const head = { title: titleFor(tool, name, raw, parsed), status: result.status, ...(result.code !== undefined ? { code: result.code } : {}) };
  const body = bodyFor(tool, parsed, result);
  const checked = body ? RenderIntentSchema.safeParse({ ...body, ...head }) : undefined;
  return checked?.success ? (checked.data as RenderIntent) : { kind: 'generic', text: result.content, ...head };
}
