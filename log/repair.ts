/**
 * Crash repair, as a pure plan: given the entries that survived (and the
 * torn last line, if one was cut off), the drafts that close whatever the
 * crash left open, and a report of what was found.
 *
 * Repair only appends. It never re-runs a tool and never rewrites a good
 * line; a defect anywhere but the open end is corruption and is refused.
 * Decisions beyond the design are in docs/adr/0002-checkpoints-and-repair.md.
 */
import { ToolResultCode } from './codes.js';
import { draftToolResult } from './draft-tool-result.js';
import type { Draft, DraftOf, Entry } from './entries.js';
import type { RepairFound } from './entries-durability.js';
import type { TurnEndReason } from './entry-values.js';
import { resumableTurn } from './resumable.js';
import { verifyLog } from './verify.js';
import type { OpenCall, OpenTail, Violation } from './verdict.js';

export interface RepairReport {
  torn?: { line: number; bytes: number };
  /** The turn that was open, now closed. */
  turn?: string;
  step?: string;
  /** Calls never dispatched: they did not run (`TOOL_NOT_STARTED`). */
  notStarted: string[];
  /** Calls dispatched with no result: they may or may not have had their effect (`TOOL_OUTCOME_UNKNOWN`). */
  outcomeUnknown: { callId: string; name: string; idempotent: boolean }[];
  /** Calls of the open answer that had no `tool/call` entry yet; repair logged them. */
  unlogged: string[];
  /** With `keepPending`: calls asked and never answered, left pending in the open turn, which is left open (ADR 0027). */
  pending?: string[];
  /** With `keepPending`: calls answered and never dispatched, left in the open turn to go on with their logged answer (ADR 0031). */
  decided?: { callId: string; outcome: string }[];
  /** Calls whose result the store refused, logged as the tool gave it (`known`). */
  kept?: string[];
  compaction: boolean;
  subagents: string[];
  /**
   * Children of a Ralph run that a crash left running (an open round's, an open check's): their logs are repaired
   * with the run's, but the run's own entries are not closed here — `bridle resume` of the run closes them as it
   * goes on with the round it was in.
   */
  linked: string[];
  /**
   * Children whose bracket a cancel closed (`subagent/end` aborted): the bracket closes at once and the child's own
   * turn ends behind it (ADR 0043), so a crash in between leaves the child's log open under a closed bracket. They are
   * repaired with the session (a child whose log is closed already needs nothing); nothing of the session is closed for them.
   */
  cancelled?: string[];
}

export type RepairPlan = { ok: true; drafts: Draft[]; report: RepairReport } | { ok: false; violations: Violation[] };

export interface RepairOptions {
  /** `bytes`, when the reader knows it, is the torn line's length in the file (its `text` may be a lossy decoding of a cut character). */
  torn?: { line: number; text: string; bytes?: number };
  /**
   * How the open turn is closed: `interrupted` after a crash (default), `aborted`/`user` when a second Ctrl-C exits
   * at once, `error` with a `code` when the running session could not go on (a failed log append, ADR 0012).
   */
  closeAs?: { reason: Extract<TurnEndReason, 'interrupted' | 'aborted' | 'error'>; cause?: string; code?: string };
  /** Why the turn is closed, when it is not a crash found on load: the repair entry's `found`, and its detail's opening. */
  because?: { found: RepairFound; detail: string };
  /**
   * Results the harness holds but could not append (the store refused the `tool/result`): the closing logs
   * them as the tool gave them, marked `uncertain`, instead of calling a finished call's outcome unknown (ADR 0017).
   */
  known?: readonly DraftOf<'tool/result'>[];
  /**
   * Resume (ADR 0027): a turn that stopped waiting on an approval — nothing of its step dispatched — is left open,
   * its calls pending, for the session to go on with (`resumableTurn`); nothing is appended for it.
   */
  keepPending?: boolean;
}

export const notStartedText = (name: string) =>
  `The session ended before this ${name} call was dispatched: it did not run. Call it again if you still need it.`;

export function outcomeUnknownText(name: string, idempotent: boolean): string {
  return [
    `The session ended while this ${name} call was running, so whether it finished and what it changed is unknown.`,
    'Re-run it only if it is read-only or idempotent; otherwise check the current state first (read the files or run a harmless command that shows whether its effect is there) and only then decide whether to run it again.',
    idempotent ? `${name} is marked idempotent: running it again has the same effect as once.` : `${name} is not idempotent: running it twice may repeat its effect.`,
  ].join(' ');
}


/** Contract: pure; refuses (ok: false) any log with a defect before its open end; the drafts, appended in order, leave a log that verifies. */
export function planRepair(entries: readonly Entry[], opts: RepairOptions = {}): RepairPlan {
  const verdict = verifyLog(entries, { allowOpenTail: true });
  if (!verdict.ok) return { ok: false, violations: verdict.violations };
  const cancelled = cancelledChildren(entries);
  const report: RepairReport = { notStarted: [], outcomeUnknown: [], unlogged: [], compaction: false, subagents: [], linked: openRalphChildren(entries), ...(cancelled.length ? { cancelled } : {}) };
  const drafts: Draft[] = [];
  if (opts.torn) {
    const bytes = opts.torn.bytes ?? Buffer.byteLength(opts.torn.text, 'utf8');
    report.torn = { line: opts.torn.line, bytes };
    drafts.push({ kind: 'repair', found: 'torn-tail', detail: `line ${opts.torn.line} was cut off mid-write (${bytes} bytes); it was removed, every earlier line is kept`, line: opts.torn.line, bytes });
  }
  const open = verdict.open;
  const resumable = opts.keepPending && !opts.torn ? resumableTurn(entries) : undefined;
  if (resumable) {
    report.pending = resumable.pending;
    if (resumable.decided.length > 0) report.decided = resumable.decided.map((d) => ({ callId: d.callId, outcome: d.answer.outcome }));
    return { ok: true, drafts, report };
  }
  if (open) drafts.push(...closeOpen(open, report, opts.closeAs ?? { reason: 'interrupted', cause: 'crash' }, opts.because, opts.known ?? []));
  return { ok: true, drafts, report };
}

const RAN = new Set(['ok', 'error', 'unknown']);

/** Contract: pure; the children whose `subagent/end` says a cancel closed their bracket, in log order. */
export function cancelledChildren(entries: readonly Entry[]): string[] {
  return entries.flatMap((e) => (e.kind === 'subagent/end' && e.reason === 'aborted' ? [e.child] : []));
}

/** Contract: pure; the child of an open `ralph/round` and of an open agent `ralph/verify`, if any. */
export function openRalphChildren(entries: readonly Entry[]): string[] {
  let round: string | undefined;
  let check: string | undefined;
  for (const e of entries) {
    if (e.kind === 'ralph/round') round = e.child;
    else if (e.kind === 'ralph/handoff') round = undefined;
    else if (e.kind === 'ralph/verify') check = e.child;
    else if (e.kind === 'ralph/verdict') check = undefined;
  }
  return [round, check].filter((c): c is string => c !== undefined);
}

/** A known result for `c`, when it can stand: one that says the call ran needs its dispatch. */
function knownResult(c: OpenCall, known: readonly DraftOf<'tool/result'>[]): DraftOf<'tool/result'> | undefined {
  const k = known.find((r) => r.callId === c.callId && r.surfaceOp === 'append' && r.toolCallId === c.toolCallId && r.name === c.name);
  if (!k || (RAN.has(k.status) && !c.dispatched)) return undefined;
  return RAN.has(k.status) ? { ...k, verdict: 'uncertain' } : k;
}

function closeOpen(open: OpenTail, report: RepairReport, closeAs: NonNullable<RepairOptions['closeAs']>, because: RepairOptions['because'], known: readonly DraftOf<'tool/result'>[]): Draft[] {
  const closing: Draft[] = [];
  for (const u of open.unloggedCalls) {
    report.unlogged.push(u.callId);
    closing.push({ kind: 'tool/call', turn: u.turn, step: u.step, callId: u.callId, toolCallId: u.toolCallId, name: u.name, arguments: u.arguments });
  }
  for (const s of open.subagents) {
    report.subagents.push(s.child);
    closing.push({ kind: 'subagent/end', callId: s.callId, child: s.child, reason: 'interrupted' });
  }
  const calls = [...open.calls, ...open.unloggedCalls.map((u) => ({ ...u, dispatched: false, idempotent: false, awaitingApproval: false }))];
  for (const c of calls) {
    if (c.awaitingApproval) closing.push({ kind: 'approval/decided', turn: c.turn, step: c.step, callId: c.callId, outcome: 'cancelled', by: 'repair' });
    const k = knownResult(c, known);
    if (k) {
      (report.kept ??= []).push(c.callId);
      closing.push(k);
    } else if (c.dispatched) {
      report.outcomeUnknown.push({ callId: c.callId, name: c.name, idempotent: c.idempotent });
      closing.push(draftToolResult(c, 'unknown', outcomeUnknownText(c.name, c.idempotent), ToolResultCode.TOOL_OUTCOME_UNKNOWN));
    } else {
      report.notStarted.push(c.callId);
      closing.push(draftToolResult(c, 'aborted', notStartedText(c.name), ToolResultCode.TOOL_NOT_STARTED));
    }
  }
  if (open.step) {
    report.step = open.step.id;
    closing.push({ kind: 'step/end', turn: open.step.turn, step: open.step.id, reason: closeAs.reason === 'error' ? 'error' : 'interrupted' });
  }
  if (open.compaction) {
    report.compaction = true;
    const t = open.compaction.estimatedTokens;
    closing.push({ kind: 'compaction/end', outcome: 'interrupted', tokensBefore: t, tokensAfter: t });
  }
  if (open.turn) {
    report.turn = open.turn.id;
    const end: DraftOf<'turn/end'> = { kind: 'turn/end', turn: open.turn.id, reason: closeAs.reason, steps: open.turn.steps };
    if (closeAs.cause !== undefined) end.cause = closeAs.cause;
    if (closeAs.code !== undefined) end.code = closeAs.code;
    closing.push(end);
  }
  const found: Draft[] = [];
  if (open.turn) {
    const detail = describe(report, open.turn.id);
    found.push({ kind: 'repair', found: because?.found ?? 'open-turn', detail: because ? `${because.detail}; ${detail}` : detail });
  }
  if (open.compaction) found.push({ kind: 'repair', found: 'orphan-compaction', detail: `compaction/start at seq ${open.compaction.seq} never ended; closed as interrupted` });
  return [...found, ...closing];
}

function describe(r: RepairReport, turn: string): string {
  const parts = [`turn ${turn} never ended`];
  if (r.step) parts.push(`step ${r.step} was open`);
  if (r.unlogged.length) parts.push(`calls logged by repair: ${r.unlogged.join(', ')}`);
  if (r.kept?.length) parts.push(`results kept as the tools gave them (not saved at first): ${r.kept.join(', ')}`);
  if (r.notStarted.length) parts.push(`never started: ${r.notStarted.join(', ')}`);
  if (r.outcomeUnknown.length) parts.push(`outcome unknown: ${r.outcomeUnknown.map((c) => `${c.callId} (${c.name})`).join(', ')}`);
  if (r.subagents.length) parts.push(`subagents closed: ${r.subagents.join(', ')}`);
  return `${parts.join('; ')}; closed without re-running anything`;
}

/** One line per finding, for people. */
export function formatRepairReport(r: RepairReport): string[] {
  const out: string[] = [];
  if (r.torn) out.push(`torn tail: line ${r.torn.line} (${r.torn.bytes} bytes) was cut off mid-write and removed`);
  if (r.turn) out.push(`${describe(r, r.turn)}`);
  if (r.compaction) out.push('an unfinished compaction was closed as interrupted');
  return out;
}

export const repairedSomething = (r: RepairReport) => Boolean(r.torn || r.turn || r.compaction);
