/**
 * What a replayed segment's session is created with, read from the log: the
 * settings `session/start` recorded (older logs: the checkpoints' context and
 * the caller's overrides), the model name and system prompt of the request
 * header in effect, and a check that the tools replay was given are the
 * tools the log's headers list.
 */
import type { Entry, EntryOf, SessionConfig } from '../log/entries.js';
import type { RetryPolicy } from '../machines/retry-policy.js';
import { toolSpec } from '../tools/index.js';
import { ToolError, type ToolDefinition } from '../ports/tools.js';
import { delegateTool } from '../runtime/subagent.js';
import { NotReplayableError } from './errors.js';
import type { Segment } from './segments.js';

export interface SegmentSetup {
  modelName: string;
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
  const maxSteps = ctx?.maxSteps ?? config.maxSteps;
  const retry = ctx?.retry ?? config.retry;
  if (maxSteps !== undefined) out.maxSteps = maxSteps;
  if (retry !== undefined) out.retry = retry;
  return out;
}

/**
 * The tools a log was written with, for replay: `builtins`, plus the
 * `delegate` tool where a request header lists it, plus the MCP tools the
 * log's `mcp/server` entries registered (their wire forms from the headers,
 * their class — read-only, idempotent — from those entries). Replay never
 * runs a tool (its result comes from the log, and the child's work is in the
 * child's own log), so only a tool's wire form and class matter: each added
 * one has a body that refuses to run. Listed in the order the first header
 * lists them (an MCP row may stand before the built-ins).
 * Contract: pure; the delegate tool's spec is the one the CLI offers.
 */
export function toolsOfLog(entries: readonly Entry[], builtins: readonly ToolDefinition[]): ToolDefinition[] {
  const headers = entries.filter((e): e is Header => e.kind === 'request/header');
  const out = [...builtins];
  const never = (): never => {
    throw new ToolError('REPLAY_RUNS_NO_TOOL', 'replay re-runs no tool');
  };
  const delegates = headers.some((h) => h.tools.some((t) => t.name === 'delegate'));
  if (delegates && !out.some((t) => t.name === 'delegate')) {
    const nobody = { id: '', depth: 0, cwd: '', bridleHome: '', inject: never, entries: never, record: never };
    const spec = delegateTool({ maxDepth: 0, parent: nobody, subagents: { spawn: never } });
    out.push({ ...spec, execute: async () => never() });
  }
  const classes = new Map<string, { readOnly: boolean; idempotent: boolean }>();
  for (const e of entries) if (e.kind === 'mcp/server') for (const t of e.tools) classes.set(t.name, t);
  for (const h of headers) {
    for (const spec of h.tools) {
      const c = classes.get(spec.name);
      if (!c || out.some((t) => t.name === spec.name)) continue;
      out.push({ ...spec, ...c, present: (args: unknown) => `${spec.name} ${JSON.stringify(args)}`, execute: async () => never() });
    }
  }
  const first = headers[0]?.tools.map((t) => t.name) ?? [];
  const at = (name: string) => (first.includes(name) ? first.indexOf(name) : first.length);
  return out.map((t, i) => ({ t, i })).sort((a, b) => at(a.t.name) - at(b.t.name) || a.i - b.i).map(({ t }) => t);
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
