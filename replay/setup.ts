/**
 * What a replayed segment's session is created with, read from the log: the
 * settings `session/start` recorded (older logs: the checkpoints' context and
 * the caller's overrides), the model name and system prompt of the request
 * header in effect, and a check that the tools replay was given are the
 * tools the log's headers list.
 */
import type { Entry, EntryOf } from '../log/entries.js';
import type { ReasoningProvider } from '../log/entry-values.js';
import type { SessionConfig } from '../log/entries-session.js';
import type { RetryPolicy } from '../ports/loop.js';
import { optionalTools, toolSpec } from '../tools/index.js';
import { ToolError } from '../ports/tool-error.js';
import type { ToolDefinition } from '../ports/tools.js';
import { delegateTool } from '../runtime/subagents/delegate.js';
import { workflowTool } from '../runtime/workflow/tool.js';
import { handoffTool, verdictTool } from '../runtime/ralph/tools.js';
import { skillTool } from '../runtime/skills/plugin.js';
import { NotReplayableError } from './errors.js';
import type { Segment } from './segments.js';

export interface SegmentSetup {
  modelName: string;
  /** The reasoning wire the header in effect names, so the replayed header is the logged one. */
  reasoning?: ReasoningProvider;
  /** The logged system prompt in effect; undefined before any request header. */
  system?: string;
  maxSteps?: number;
  retry?: RetryPolicy;
}

type Header = EntryOf<'request/header'>;

/** The header in effect where a segment starts: the first it logs, else the last before it. */
function headerFor(entries: readonly Entry[], seg: Segment): Header | undefined {
  for (let i = seg.from; i < seg.to; i++) if (entries[i]!.kind === 'request/header') return entries[i] as Header;
  for (let i = seg.from - 1; i >= 0; i--) if (entries[i]!.kind === 'request/header') return entries[i] as Header;
  return undefined;
}

/** Contract: pure. */
export function segmentSetup(entries: readonly Entry[], seg: Segment, config: SessionConfig): SegmentSetup {
  const start = entries[0] as EntryOf<'session/start'>;
  const h = headerFor(entries, seg);
  let ctx: { maxSteps?: number; retry?: RetryPolicy } | undefined;
  for (let i = seg.from; i < seg.to && !ctx; i++) {
    const e = entries[i]!;
    if (e.kind === 'checkpoint') ctx = (e.snapshot as { context?: typeof ctx } | null)?.context;
  }
  const out: SegmentSetup = { modelName: h?.params.model ?? start.model };
  if (h) out.system = h.system;
  if (h?.params.reasoning !== undefined) out.reasoning = h.params.reasoning;
  const maxSteps = ctx?.maxSteps ?? config.maxSteps;
  const retry = ctx?.retry ?? config.retry;
  if (maxSteps !== undefined) out.maxSteps = maxSteps;
  if (retry !== undefined) out.retry = retry;
  return out;
}

/** The harness's own tools that are not built-ins (delegate, workflow, Ralph's handoff and verdict, skill, and the built-ins `base` leaves out: update_plan), for their flags (read-only, idempotent, delegates): the scheduler and the dispatch entries depend on them. */
function harnessTools(): ToolDefinition[] {
  const never = (): never => {
    throw new ToolError('REPLAY_RUNS_NO_TOOL', 'replay re-runs no tool');
  };
  const nobody = { id: '', depth: 0, cwd: '', bridleHome: '', inject: never, entries: never, record: never, child: never };
  const registry = { maxDepth: 0, register: never, names: () => [], admit: never, track: never, drain: async () => {} };
  const runner = { run: never };
  return [delegateTool({ parent: nobody, subagents: registry, offered: () => [] }), workflowTool({ parent: nobody, subagents: registry, runner, offered: () => [] }), handoffTool({}), verdictTool({}), skillTool([], { workspace: '', bridleHome: '' }), ...optionalTools()];
}

/**
 * The tools a log was written with, for replay: `builtins`, plus a stand-in
 * for every other tool its request headers list (`delegate`, a plugin's),
 * made from the logged spec itself — name, description and the JSON Schema
 * of its parameters, as the model saw them — with the flags of the
 * harness's own tool of that name, and a body that refuses to run. Replay
 * never runs a tool: results come from the log, and a child's work is in
 * the child's own log.
 * Contract: pure; each added tool's spec is the one its header logged.
 */
export function toolsOfLog(entries: readonly Entry[], builtins: readonly ToolDefinition[]): ToolDefinition[] {
  const known = new Map(harnessTools().map((t) => [t.name, t]));
  // An MCP tool's class (read-only, idempotent) is what its server's start logged (`mcp/server`).
  const classes = new Map<string, { readOnly: boolean; idempotent: boolean }>();
  for (const e of entries) if (e.kind === 'mcp/server') for (const t of e.tools) classes.set(t.name, t);
  const stand: ToolDefinition[] = [];
  for (const e of entries) {
    if (e.kind !== 'request/header') continue;
    for (const spec of e.tools) {
      if (builtins.some((t) => t.name === spec.name) || stand.some((t) => t.name === spec.name)) continue;
      const flags = known.get(spec.name);
      const mcp = classes.get(spec.name);
      stand.push({
        name: spec.name,
        description: spec.description,
        parameters: spec.parameters,
        readOnly: mcp?.readOnly ?? flags?.readOnly ?? false,
        idempotent: mcp?.idempotent ?? flags?.idempotent ?? false,
        ...(flags?.delegates ? { delegates: true } : {}),
        present: flags ? (a: unknown) => flags.present(a) : () => spec.name,
        execute: async () => {
          throw new ToolError('REPLAY_RUNS_NO_TOOL', `replay re-runs no ${spec.name}`);
        },
      });
    }
  }
  // In the order the first header lists them; built-ins it does not list after them (checkTools names those).
  const all = [...builtins, ...stand];
  const first = entries.find((e): e is EntryOf<'request/header'> => e.kind === 'request/header');
  if (!first) return all;
  const order = first.tools.map((t) => t.name);
  const rank = (t: ToolDefinition) => (order.includes(t.name) ? order.indexOf(t.name) : order.length);
  return all.map((t, i) => ({ t, i })).sort((a, b) => rank(a.t) - rank(b.t) || a.i - b.i).map((x) => x.t);
}

/** Contract: throws `NotReplayableError` naming the difference when a logged header lists other tools, or params replay cannot set. */
export function checkTools(entries: readonly Entry[], tools: readonly ToolDefinition[]): void {
  const mine = tools.map(toolSpec);
  const names = (xs: readonly { name: string }[]) => xs.map((t) => t.name).join(', ');
  for (const e of entries) {
    if (e.kind !== 'request/header') continue;
    if (e.params.temperature !== undefined || e.params.maxTokens !== undefined) throw new NotReplayableError(`request header at seq ${e.seq} sets model params (temperature, maxTokens) that a session cannot be created with`);
    if (JSON.stringify(e.tools) === JSON.stringify(mine)) continue;
    const differ = e.tools.filter((t) => JSON.stringify(t) !== JSON.stringify(mine.find((m) => m.name === t.name))).map((t) => t.name);
    const extra = mine.filter((m) => !e.tools.some((t) => t.name === m.name)).map((m) => m.name);
    throw new NotReplayableError(
      `the tools replay was given (${names(mine)}) are not the ones the header at seq ${e.seq} lists (${names(e.tools)})${differ.length ? `; differing or missing: ${differ.join(', ')}` : ''}${extra.length ? `; not in the log: ${extra.join(', ')}` : ''}`,
    );
  }
}

/** For each `turn/start` and `step/start` index, the system prompt of the header that turn's (or step's) first request logged. */
export function headerChanges(entries: readonly Entry[]): Map<number, string> {
  const out = new Map<number, string>();
  let turnAt = -1;
  entries.forEach((e, i) => {
    if (e.kind === 'turn/start') turnAt = i;
    if (e.kind !== 'step/start') return;
    const h = entries[i + 1];
    if (h?.kind === 'request/header') {
      out.set(i, h.system);
      if (turnAt >= 0) out.set(turnAt, h.system);
    }
    turnAt = -1;
  });
  return out;
}
