/**
 * What a delegation hands back to the tool call that asked for it, built
 * from the subagent machine's context: pure, so the machine's final states
 * only name which one applies.
 */
import { SubagentCode } from '../log/codes.js';
import type { DraftOf } from '../log/entries.js';
import type { Spend } from '../log/entries-budget.js';
import type { TurnEndReason } from '../log/entry-values.js';

/** What the delegation asked for, as the machine's input. */
export interface SubagentInput {
  /** The tool call that asked (`t1.s2.c1`): the brackets in the parent's log name it. */
  callId: string;
  /** The child session's id. */
  child: string;
  /** The provider's name (`spawn`, `fork`, `process`, `mock-remote`). */
  provider: string;
  depth: number;
  task: string;
  /** The tool filter, if any. */
  tools?: readonly string[];
  /** The longest report handed back, in code points; longer ones are cut with a note naming the child's log. */
  reportLimit: number;
}

/** The registry's pre-check, as the machine sees it. */
export type AdmissionVerdict = { ok: true } | { ok: false; code: string; message: string };

/** How the child's turn ended, with the text it ended on. */
export interface ChildReport {
  reason: TurnEndReason;
  code?: string;
  cause?: string;
  report: string;
  /** What the child and its own tree spent, as its log says (ADR 0047). */
  usage?: Spend;
}

/** The bounded result back to the parent, call-linked through the tool call that awaits it. */
export interface SubagentResult {
  status: 'ok' | 'error';
  code?: string;
  content: string;
  child: string;
  /** Whether a child was created (and its brackets logged). */
  started: boolean;
  /** A completed child's report alone, bounded, without the note naming the child (what a workflow's `agent()` returns). */
  report?: string;
}

/** Contract: pure; `text` whole when it has at most `limit` code points, else cut there with a note saying so. */
export function boundReport(text: string, limit: number, location: string): string {
  const points = [...text];
  if (points.length <= limit) return text;
  return `${points.slice(0, limit).join('')}\n[report cut at ${limit} of ${points.length} characters; the whole of it is in the subagent's log: ${location}]`;
}

const where = (child: string, depth: number, location: string | undefined) => `(subagent ${child}, depth ${depth}${location ? `, log: ${location}` : ''})`;

export const refusedResult = (i: SubagentInput, v: AdmissionVerdict): SubagentResult => ({
  status: 'error',
  code: v.ok ? SubagentCode.SUBAGENT_REFUSED : v.code,
  content: `Not delegated (${v.ok ? SubagentCode.SUBAGENT_REFUSED : v.code}): ${v.ok ? 'refused' : v.message}. No subagent was created.`,
  child: i.child,
  started: false,
});

export const failedResult = (i: SubagentInput, code: string, message: string, started: boolean, location?: string): SubagentResult => ({
  status: 'error',
  code,
  content: `The subagent failed (${code}): ${message} ${where(i.child, i.depth, location)}`,
  child: i.child,
  started,
});

export const cancelledResult = (i: SubagentInput, cause: string, started: boolean, location?: string): SubagentResult => {
  const code = cause === SubagentCode.TREE_BUDGET_EXHAUSTED ? cause : SubagentCode.ABORTED;
  const why = code === SubagentCode.ABORTED ? 'the delegation was cancelled' : 'the delegation tree\'s budget (--tree-budget) is spent';
  return { status: 'error', code, content: `The subagent was stopped (${code}): ${why}. ${where(i.child, i.depth, location)}`, child: i.child, started };
};

/** A child's turn that completed is the report; any other ending is an error naming how it ended. */
export function reportedResult(i: SubagentInput, r: ChildReport, location: string | undefined): SubagentResult {
  const text = boundReport(r.report, i.reportLimit, location ?? i.child);
  if (r.reason === 'completed') return { status: 'ok', content: `${text || '(the subagent said nothing)'}\n${where(i.child, i.depth, location)}`, child: i.child, started: true, report: text };
  const code = r.code === SubagentCode.TREE_BUDGET_EXHAUSTED || r.code === SubagentCode.BUDGET_EXHAUSTED ? r.code : SubagentCode.SUBAGENT_FAILED;
  const how = `${r.reason}${r.code ? ` (${r.code})` : ''}${r.cause ? `: ${r.cause}` : ''}`;
  return { status: 'error', code, content: `The subagent's turn ended ${how}. ${text ? `Its last words:\n${text}\n` : ''}${where(i.child, i.depth, location)}`, child: i.child, started: true };
}

export const draftSubagentStart = (i: SubagentInput, model?: string): DraftOf<'subagent/start'> => ({ kind: 'subagent/start', callId: i.callId, child: i.child, depth: i.depth, mode: i.provider, ...(model !== undefined ? { model } : {}) });

export function draftSubagentEnd(i: SubagentInput, reason: TurnEndReason, code?: string, usage?: Spend): DraftOf<'subagent/end'> {
  const d: DraftOf<'subagent/end'> = { kind: 'subagent/end', callId: i.callId, child: i.child, reason };
  if (code !== undefined) d.code = code;
  if (usage !== undefined) d.usage = { tokens: usage.tokens, usd: usage.usd };
  return d;
}
