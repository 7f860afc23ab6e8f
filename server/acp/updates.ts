/**
 * The log as ACP `session/update`s: a pure function of one entry (and the
 * calls seen before it), used live and to stream a loaded session's history.
 * A tool call is `tool_call` (pending) when `tool/call` is logged,
 * `in_progress` at `tool/dispatch`, and `completed` or `failed` at its
 * `tool/result`, with its render intent as ACP content (ADR 0067: the
 * result's text; a diff for a change that landed; a search's hits as
 * locations; a command's output as a fenced block), and after a plan's
 * result (`update_plan`, ADR 0076) the session's `plan` update. Text and reasoning stream live from the model's chunks
 * (`chunkUpdate`); an `assistant/message` carries them only in history, or
 * for a step whose text did not stream.
 */
import path from 'node:path';
import type { SessionUpdate, ToolCallLocation, ToolKind } from '@agentclientprotocol/sdk';
import type { Chunk } from '../../log/chunks.js';
import type { CostReport } from '../../log/cost.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import type { PlanStep } from '../../ports/present.js';
import type { ToolDefinition } from '../../ports/tools.js';
import { presentResult } from '../../tools/present.js';
import { intentContent } from './intent-content.js';
import { FsCode } from '../../ports/fs.js';

/** What the mapping needs of the session's tools: each one's presenters. */
export interface ToolLookup {
  get(name: string): ToolDefinition | undefined;
}

export interface FeedState {
  /** The workspace: relative paths in arguments are shown absolute, as ACP wants them. */
  cwd: string;
  tools: ToolLookup;
  /** Calls seen so far, by call id: a result's intent needs its call's arguments (parsed, and as logged). */
  calls: Map<string, { name: string; args: unknown; raw?: string }>;
}

const KINDS: Record<string, ToolKind> = {
  read_file: 'read',
  list_dir: 'read',
  write_file: 'edit',
  edit_file: 'edit',
  grep: 'search',
  glob: 'search',
  bash: 'execute',
  delegate: 'think',
  update_plan: 'think',
};

/** Contract: pure. The ACP kind a tool's calls show as: the built-ins by name, a fetching tool (`fetch`, `web_fetch`, `mcp__x__fetch`) as `fetch`, anything else `other`. */
export function toolKind(name: string): ToolKind {
  if (Object.hasOwn(KINDS, name)) return KINDS[name]!;
  return /(^|_)fetch$/.test(name) ? 'fetch' : 'other';
}

const parseArgs = (raw: string): unknown => {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
};

const record = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

const isInside = (root: string, p: string) => {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/**
 * Contract: pure. The files a call touches, absolute (`path` arguments; read_file's `offset` as the line), and
 * only those inside the workspace: an editor follows a location (opens the file, shows it beside the call), so a
 * path the call is refused for (`/root/.ssh/id_rsa`) is never sent (issue 20, item 16). Lexical: a link inside
 * the workspace that leads out is refused by the file tools, and its result takes the location back.
 */
export function toolLocations(name: string, args: unknown, cwd: string): ToolCallLocation[] {
  const a = record(args);
  if (typeof a.path !== 'string' || a.path === '' || a.path.includes('\0') || name === 'bash') return [];
  const root = path.resolve(cwd);
  const resolved = path.resolve(root, a.path);
  if (!isInside(root, resolved)) return [];
  const at: ToolCallLocation = { path: resolved };
  if (name === 'read_file' && typeof a.offset === 'number') at.line = a.offset;
  return [at];
}

/** Contract: never throws; the tool's presenter's line, or its name when there is none or it fails on these arguments. */
export function toolTitle(tools: ToolLookup, name: string, args: unknown): string {
  try {
    const t = tools.get(name);
    return t ? t.present(args) : name;
  } catch {
    return name;
  }
}

function callUpdate(e: EntryOf<'tool/call'>, s: FeedState): SessionUpdate {
  const args = parseArgs(e.arguments);
  s.calls.set(e.callId, { name: e.name, args, raw: e.arguments });
  return {
    sessionUpdate: 'tool_call',
    toolCallId: e.callId,
    title: toolTitle(s.tools, e.name, args),
    kind: toolKind(e.name),
    status: 'pending',
    locations: toolLocations(e.name, args, s.cwd),
    rawInput: args,
  };
}

/** The file tools' refusals of a path that leads out of bounds (through a link, say): its location is taken back. */
const ESCAPED = new Set<string>([FsCode.OUTSIDE_WORKSPACE, FsCode.INSIDE_BRIDLE_HOME, FsCode.PATH_CHANGED]);

/** A plan intent as ACP's `plan` update: every step, whole (the client replaces its plan); ACP's priority is required, medium when the step has none. */
const planUpdate = (entries: readonly PlanStep[]): SessionUpdate => ({
  sessionUpdate: 'plan',
  entries: entries.map((p) => ({ content: p.content, status: p.status, priority: p.priority ?? 'medium' })),
});

function resultUpdates(e: EntryOf<'tool/result'>, s: FeedState): SessionUpdate[] {
  const ok = e.status === 'ok';
  const call = s.calls.get(e.callId);
  const raw = call ? (call.raw ?? JSON.stringify(call.args)) : '';
  const intent = call ? presentResult(s.tools, call.name, raw, e) : undefined;
  const shown = intent ? intentContent(intent, e.content, s.cwd) : { content: [{ type: 'content' as const, content: { type: 'text' as const, text: e.content } }] };
  const escaped = !ok && e.code !== undefined && ESCAPED.has(e.code) && call !== undefined && toolLocations(call.name, call.args, s.cwd).length > 0;
  const locations = escaped ? [] : shown.locations?.length ? shown.locations : undefined;
  const update: SessionUpdate = {
    sessionUpdate: 'tool_call_update',
    toolCallId: e.callId,
    status: ok ? 'completed' : 'failed',
    content: shown.content,
    ...(locations ? { locations } : {}),
    rawOutput: { status: e.status, ...(e.code !== undefined ? { code: e.code } : {}) },
  };
  return ok && intent?.kind === 'plan' ? [update, planUpdate(intent.entries)] : [update];
}

/**
 * Contract: pure. The plan a log holds now, as the `plan` update a client replaces its plan with: that of the
 * newest call whose result is logged ok and renders as a plan (ADR 0076), or none when no call has. For a
 * session opened without its history (`session/resume`), whose client would otherwise show no plan until the next.
 */
export function currentPlan(entries: readonly Entry[], tools: ToolLookup): SessionUpdate | undefined {
  const calls = new Map<string, EntryOf<'tool/call'>>();
  for (const e of entries) if (e.kind === 'tool/call') calls.set(e.callId, e);
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.kind !== 'tool/result' || e.status !== 'ok') continue;
    const call = calls.get(e.callId);
    // Only a tool with a result presenter can render a plan: the rest are passed over unparsed.
    if (!call || !tools.get(call.name)?.presentResult) continue;
    const intent = presentResult(tools, call.name, call.arguments, e);
    if (intent.kind === 'plan') return planUpdate(intent.entries);
  }
  return undefined;
}

export type Mode = { kind: 'history' } | { kind: 'live'; streamed: ReadonlySet<string> };

/**
 * Contract: pure but for `state.calls`, which it records calls in; the
 * updates one entry means, in order (none for most kinds). History shows the
 * user's own words; live, the client already has them.
 */
export function entryUpdates(e: Entry, state: FeedState, mode: Mode): SessionUpdate[] {
  switch (e.kind) {
    case 'user/message':
      return mode.kind === 'history' && (e.origin === 'user' || e.origin === 'steer') ? [{ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: e.text } }] : [];
    case 'assistant/message': {
      if (mode.kind === 'live' && mode.streamed.has(e.step)) return [];
      const out: SessionUpdate[] = [];
      for (const b of e.blocks) {
        if (b.type === 'text' && b.text !== '') out.push({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: b.text } });
        if (b.type === 'reasoning' && b.text !== '') out.push({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: b.text } });
      }
      return out;
    }
    case 'tool/call':
      return [callUpdate(e, state)];
    case 'tool/dispatch':
      return [{ sessionUpdate: 'tool_call_update', toolCallId: e.callId, status: 'in_progress' }];
    case 'tool/result':
      return resultUpdates(e, state);
    default:
      return [];
  }
}

/**
 * Contract: pure; a running call's progress as its `tool_call_update`: the call's content for now is one line
 * (`3/10 · copying`), replaced by its result when it ends. Ephemeral: a loaded session's history has none (ADR 0065).
 */
export function progressUpdate(p: { callId: string; progress: number; total?: number; message?: string }): SessionUpdate {
  const figure = p.total !== undefined ? `${p.progress}/${p.total}` : `${p.progress}`;
  return { sessionUpdate: 'tool_call_update', toolCallId: p.callId, status: 'in_progress', content: [{ type: 'content', content: { type: 'text', text: p.message ? `${figure} · ${p.message}` : figure } }] };
}

/** Contract: pure; the update a live chunk means (text and reasoning deltas; nothing for the rest). */
export function chunkUpdate(chunk: Chunk): SessionUpdate | undefined {
  if (chunk.type === 'text-delta' && chunk.text !== '') return { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: chunk.text } };
  if (chunk.type === 'reasoning-delta' && chunk.text !== '') return { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: chunk.text } };
  return undefined;
}

/**
 * Contract: pure; the `usage_update` for a session after a step: `used` is the
 * context the step's request and answer filled (the provider's input plus
 * output tokens of the newest answer with usage), `size` the window, and
 * `cost` the whole subagent tree's so far, from `bridle cost`'s report of the
 * same logs. A tree with a model the price table lacks has no cost (`null`),
 * never a guess; a scripted model's usage costs 0 and `_meta` says it was scripted.
 */
export function usageUpdate(entries: readonly Entry[], report: CostReport, size: number): SessionUpdate {
  let used = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.kind === 'assistant/message' && e.usage) {
      used = e.usage.inputTokens + e.usage.outputTokens;
      break;
    }
  }
  const usd = report.total.usd;
  return {
    sessionUpdate: 'usage_update',
    used,
    size,
    cost: usd === undefined ? null : { amount: usd, currency: 'USD' },
    _meta: {
      bridle: {
        tokens: report.total.tokens,
        pricesAsOf: report.asOf,
        scripted: report.steps.length > 0 && report.steps.every((s) => s.scripted),
        ...(report.total.unpriced.length ? { unpriced: report.total.unpriced } : {}),
        sessions: report.sessions.length,
      },
    },
  };
}
