/**
 * The text timeline `bridle replay` prints: one line per entry, then totals.
 * Pure. A log holds model text; every line goes through `visible`, so a
 * logged escape sequence is shown, never acted on.
 */
import type { Entry } from '../log/entries.js';
import { shortId } from '../log/ids.js';
import type { Totals } from '../log/verdict.js';
import { visible } from './visible.js';
import { describePolicy } from '../safety/policy-order.js';

const clip = (s: string, n = 60) => {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
};

function where(e: Entry): string {
  if ('step' in e && typeof e.step === 'string') return e.step;
  if ('turn' in e && typeof e.turn === 'string') return e.turn;
  return '-';
}

type Summaries = { [K in Entry['kind']]: (e: Extract<Entry, { kind: K }>) => string };

/** The session's own life: start, input, cancel, end, reopening and takeover, and the log's housekeeping. */
const sessionLines = {
  'session/start': (e) => `${e.id} model=${e.model} cwd=${e.cwd}${e.parent ? ` parent=${e.parent} depth=${e.depth}` : ''}`,
  'session/input': (e) => `${e.mode}${e.origin !== 'user' ? ` from ${e.origin}` : ''}: ${JSON.stringify(clip(e.text))}`,
  'session/cancel': (e) => `cancel by ${e.by}`,
  'session/compact': (e) => `compact by ${e.by}`,
  'session/end': (e) => `end by ${e.by}`,
  'session/reopen': (e) => e.writer ? `pid ${e.writer.pid} on ${e.writer.host} goes on with the log` : 'a new process goes on with the log',
  'checkpoint': (e) => `after ${e.turn}`,
  'repair': (e) => `${e.found}: ${clip(e.detail, 80)}`,
  'log/not-durable': (e) => `entries up to seq ${e.upTo} not saved: ${clip(e.detail, 70)}`,
  'session/policy': (e) => `${e.cwd ? `workspace ${e.cwd.from} → ${e.cwd.to}; ` : ''}policy ${describePolicy(e.from)} → ${describePolicy(e.to)} (${e.by})`,
  'session/takeover': (e) => `pid ${e.by.pid} on ${e.by.host} took over from pid ${e.stale.pid} on ${e.stale.host} (gone; held since ${e.stale.since})`,
} satisfies Partial<Summaries>;

/** A turn and its steps: the input, what was asked of the model and what it answered. */
const turnLines = {
  'turn/start': (e) => `${JSON.stringify(clip(e.input))}${e.from !== undefined ? ` (input ${e.from})` : ''}`,
  'user/message': (e) => `${e.origin}: ${JSON.stringify(clip(e.text))}${e.surfaceOp === 'append' ? '' : ` (replaces ${e.surfaceOp.start}..${e.surfaceOp.end})`}${e.from !== undefined ? ` (input ${e.from})` : ''}`,
  'step/start': () => '',
  'request/header': (e) => `model=${e.params.model}, ${e.tools.length} tools`,
  'assistant/message': (e) => {
    const text = e.blocks.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join('');
    const calls = e.blocks.filter((b) => b.type === 'tool-call').length;
    const finish = e.finish.kind === 'ok' ? e.finish.reason : e.finish.kind === 'error' ? `error ${e.finish.code}` : 'aborted';
    return [text && JSON.stringify(clip(text, 50)), calls ? `${calls} call${calls > 1 ? 's' : ''}` : '', finish, e.interrupted ? 'interrupted' : ''].filter(Boolean).join(' · ');
  },
  'model/retry': (e) => `attempt ${e.attempt} failed ${e.code}; retry in ${e.delayMs} ms`,
  'step/end': (e) => e.reason,
  'turn/end': (e) => `${e.reason}${e.cause ? ` (${e.cause})` : ''}${e.code ? ` ${e.code}` : ''}, ${e.steps} step${e.steps === 1 ? '' : 's'}`,
} satisfies Partial<Summaries>;

/** Tool calls and the questions around them: approvals, budgets, tools asking the user. */
const callsLines = {
  'tool/call': (e) => `${shortId(e.callId)} ${e.name} ${clip(e.arguments, 50)}`,
  'approval/asked': (e) => `${shortId(e.callId)} ${e.name}: ${clip(e.reason, 50)}`,
  'approval/decided': (e) => `${shortId(e.callId)} ${e.outcome} by ${e.by}`,
  'budget/asked': (e) => `budget spent: ${e.used.tokens} tokens, $${e.used.usd.toFixed(4)}${e.limit.tokens !== undefined ? `; cap ${e.limit.tokens} tokens` : ''}${e.limit.usd !== undefined ? `; cap $${e.limit.usd.toFixed(4)}` : ''}`,
  'budget/decided': (e) => `budget ${e.outcome} by ${e.by}${e.limit ? ` → cap ${JSON.stringify(e.limit)}` : ''}`,
  'question/asked': (e) => `${shortId(e.question)} ${e.from} asks: ${clip(e.message, 50)}${e.unshowable ? ` (cannot be shown: ${clip(e.unshowable, 40)})` : e.fields?.length ? ` (${e.fields.length} field${e.fields.length === 1 ? '' : 's'})` : ''}`,
  'question/decided': (e) => `${shortId(e.question)} ${e.outcome} by ${e.by}${e.reason ? `: ${clip(e.reason, 50)}` : ''}`,
  'tool/dispatch': (e) => `${shortId(e.callId)} ${e.name}${e.idempotent ? ' (idempotent)' : ''}`,
  'tool/result': (e) => `${shortId(e.callId)} ${e.status}${e.code ? ` ${e.code}` : ''}: ${clip(e.content, 50)}`,
} satisfies Partial<Summaries>;

/** Work a step hands off: compaction, subagents. */
const workLines = {
  'compaction/start': (e) => `${e.trigger}, ~${e.estimatedTokens} of ${e.window} tokens`,
  'compaction/summary': (e) => `${e.start}..${e.end}: ${JSON.stringify(clip(e.text, 50))}`,
  'compaction/end': (e) => `${e.outcome}, ${e.tokensBefore} → ${e.tokensAfter} tokens`,
  'subagent/start': (e) => `${e.child} (${e.mode}, depth ${e.depth}) for ${shortId(e.callId)}`,
  'subagent/end': (e) => `${e.child}: ${e.reason}${e.code ? ` ${e.code}` : ''}`,
} satisfies Partial<Summaries>;

/** The Ralph loop: its rounds, handoffs and verdicts. */
const ralphLines = {
  'ralph/start': (e) => `${e.rounds} rounds, verify ${e.verify !== null ? JSON.stringify(clip(e.verify, 30)) : ''}${e.verifier ? `${e.verify !== null ? ' and ' : ''}an agent` : ''}: ${clip(e.objective, 40)}`,
  'ralph/round': (e) => `round ${e.round}${e.attempt > 1 ? ` (attempt ${e.attempt})` : ''}: ${e.child}`,
  'ralph/handoff': (e) => `round ${e.round} ${e.handoff.status} (${e.source}, ${e.reason}): ${clip(e.handoff.summary, 50)}`,
  'ralph/verify': (e) => `round ${e.round} by ${e.by}${e.command ? ` ${JSON.stringify(clip(e.command, 40))}` : ''}${e.child ? ` ${e.child}` : ''}`,
  'ralph/verdict': (e) => `round ${e.round} ${e.verified ? 'verified' : 'rejected'} by ${e.by}${e.code ? ` ${e.code}` : ''}${e.exitCode !== undefined ? ` (exit ${e.exitCode})` : ''}`,
  'ralph/end': (e) => `${e.outcome} after round ${e.round}${e.blockerText ? `: ${clip(e.blockerText, 50)}` : ''}`,
} satisfies Partial<Summaries>;

/** What a session found as it opened: skills, MCP servers, hooks. */
const notesLines = {
  'hook/report': (e) => `${e.hook} ${e.listener}: ${clip(e.problem, 60)}`,
  'skills/found': (e) => `${e.skills.length} skills${e.warnings.length ? `, ${e.warnings.length} warnings (${[...new Set(e.warnings.map((w) => w.code))].join(', ')})` : ''}`,
  'mcp/server': (e) => e.outcome !== 'failed' ? `${e.server} ${e.outcome}, ${e.tools.length} tools${e.problems.length ? `, ${e.problems.length} left out` : ''}` : `${e.server} failed ${e.code ?? ''}: ${clip(e.message ?? '', 60)}`,
} satisfies Partial<Summaries>;

const LINES: Summaries = { ...sessionLines, ...turnLines, ...callsLines, ...workLines, ...ralphLines, ...notesLines };

export function summarize(e: Entry): string {
  return (LINES[e.kind] as (e: Entry) => string)(e);
}

/** `seq  turn.step  kind  summary`, aligned; as `visible` shows it. */
export function timelineLine(e: Entry): string {
  return visible(`${String(e.seq).padStart(6)}  ${where(e).padEnd(9)}  ${e.kind.padEnd(17)}  ${summarize(e)}`).trimEnd();
}

const counts = (r: Record<string, number | undefined>) =>
  Object.entries(r)
    .filter(([, n]) => n)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');

export function formatTotals(t: Totals): string {
  const calls = Object.values(t.calls).reduce((a, b) => a + b, 0);
  const ends = counts(t.turnEnds);
  const byStatus = counts(t.calls);
  return [
    `turns ${t.turns}${ends ? ` (${ends})` : ''}`,
    `steps ${t.steps}`,
    `calls ${calls}${byStatus ? ` (${byStatus})` : ''}`,
    `retries ${t.retries}`,
    `repairs ${t.repairs}`,
    `checkpoints ${t.checkpoints}`,
  ].join(' · ');
}
