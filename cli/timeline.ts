/**
 * The text timeline `bridle replay` prints: one line per entry, then totals.
 * Pure. A log holds model text; every line goes through `visible`, so a
 * logged escape sequence is shown, never acted on.
 */
import type { Entry } from '../log/entries.js';
import { shortId } from '../log/ids.js';
import type { Totals } from '../log/verify.js';
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

export function summarize(e: Entry): string {
  switch (e.kind) {
    case 'session/start':
      return `${e.id} model=${e.model} cwd=${e.cwd}${e.parent ? ` parent=${e.parent} depth=${e.depth}` : ''}`;
    case 'turn/start':
      return `${JSON.stringify(clip(e.input))}${e.from !== undefined ? ` (input ${e.from})` : ''}`;
    case 'user/message':
      return `${e.origin}: ${JSON.stringify(clip(e.text))}${e.surfaceOp === 'append' ? '' : ` (replaces ${e.surfaceOp.start}..${e.surfaceOp.end})`}${e.from !== undefined ? ` (input ${e.from})` : ''}`;
    case 'session/input':
      return `${e.mode}${e.origin !== 'user' ? ` from ${e.origin}` : ''}: ${JSON.stringify(clip(e.text))}`;
    case 'session/cancel':
      return `cancel by ${e.by}`;
    case 'session/compact':
      return `compact by ${e.by}`;
    case 'session/end':
      return `end by ${e.by}`;
    case 'session/reopen':
      return e.writer ? `pid ${e.writer.pid} on ${e.writer.host} goes on with the log` : 'a new process goes on with the log';
    case 'step/start':
      return '';
    case 'request/header':
      return `model=${e.params.model}, ${e.tools.length} tools`;
    case 'assistant/message': {
      const text = e.blocks.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join('');
      const calls = e.blocks.filter((b) => b.type === 'tool-call').length;
      const finish = e.finish.kind === 'ok' ? e.finish.reason : e.finish.kind === 'error' ? `error ${e.finish.code}` : 'aborted';
      return [text && JSON.stringify(clip(text, 50)), calls ? `${calls} call${calls > 1 ? 's' : ''}` : '', finish, e.interrupted ? 'interrupted' : ''].filter(Boolean).join(' · ');
    }
    case 'model/retry':
      return `attempt ${e.attempt} failed ${e.code}; retry in ${e.delayMs} ms`;
    case 'tool/call':
      return `${shortId(e.callId)} ${e.name} ${clip(e.arguments, 50)}`;
    case 'approval/asked':
      return `${shortId(e.callId)} ${e.name}: ${clip(e.reason, 50)}`;
    case 'approval/decided':
      return `${shortId(e.callId)} ${e.outcome} by ${e.by}`;
    case 'budget/asked':
      return `budget spent: ${e.used.tokens} tokens, $${e.used.usd.toFixed(4)}${e.limit.tokens !== undefined ? `; cap ${e.limit.tokens} tokens` : ''}${e.limit.usd !== undefined ? `; cap $${e.limit.usd.toFixed(4)}` : ''}`;
    case 'budget/decided':
      return `budget ${e.outcome} by ${e.by}${e.limit ? ` → cap ${JSON.stringify(e.limit)}` : ''}`;
    case 'question/asked':
      return `${shortId(e.question)} ${e.from} asks: ${clip(e.message, 50)}${e.unshowable ? ` (cannot be shown: ${clip(e.unshowable, 40)})` : e.fields?.length ? ` (${e.fields.length} field${e.fields.length === 1 ? '' : 's'})` : ''}`;
    case 'question/decided':
      return `${shortId(e.question)} ${e.outcome} by ${e.by}${e.reason ? `: ${clip(e.reason, 50)}` : ''}`;
    case 'tool/dispatch':
      return `${shortId(e.callId)} ${e.name}${e.idempotent ? ' (idempotent)' : ''}`;
    case 'tool/result':
      return `${shortId(e.callId)} ${e.status}${e.code ? ` ${e.code}` : ''}: ${clip(e.content, 50)}`;
    case 'step/end':
      return e.reason;
    case 'turn/end':
      return `${e.reason}${e.cause ? ` (${e.cause})` : ''}${e.code ? ` ${e.code}` : ''}, ${e.steps} step${e.steps === 1 ? '' : 's'}`;
    case 'checkpoint':
      return `after ${e.turn}`;
    case 'repair':
      return `${e.found}: ${clip(e.detail, 80)}`;
    case 'hook/report':
      return `${e.hook} ${e.listener}: ${clip(e.problem, 60)}`;
    case 'log/not-durable':
      return `entries up to seq ${e.upTo} not saved: ${clip(e.detail, 70)}`;
    case 'session/policy':
      return `${e.cwd ? `workspace ${e.cwd.from} → ${e.cwd.to}; ` : ''}policy ${describePolicy(e.from)} → ${describePolicy(e.to)} (${e.by})`;
    case 'session/takeover':
      return `pid ${e.by.pid} on ${e.by.host} took over from pid ${e.stale.pid} on ${e.stale.host} (gone; held since ${e.stale.since})`;
    case 'compaction/start':
      return `${e.trigger}, ~${e.estimatedTokens} of ${e.window} tokens`;
    case 'compaction/summary':
      return `${e.start}..${e.end}: ${JSON.stringify(clip(e.text, 50))}`;
    case 'compaction/end':
      return `${e.outcome}, ${e.tokensBefore} → ${e.tokensAfter} tokens`;
    case 'subagent/start':
      return `${e.child} (${e.mode}, depth ${e.depth}) for ${shortId(e.callId)}`;
    case 'subagent/end':
      return `${e.child}: ${e.reason}${e.code ? ` ${e.code}` : ''}`;
    case 'ralph/start':
      return `${e.rounds} rounds, verify ${e.verify !== null ? JSON.stringify(clip(e.verify, 30)) : ''}${e.verifier ? `${e.verify !== null ? ' and ' : ''}an agent` : ''}: ${clip(e.objective, 40)}`;
    case 'ralph/round':
      return `round ${e.round}${e.attempt > 1 ? ` (attempt ${e.attempt})` : ''}: ${e.child}`;
    case 'ralph/handoff':
      return `round ${e.round} ${e.handoff.status} (${e.source}, ${e.reason}): ${clip(e.handoff.summary, 50)}`;
    case 'ralph/verify':
      return `round ${e.round} by ${e.by}${e.command ? ` ${JSON.stringify(clip(e.command, 40))}` : ''}${e.child ? ` ${e.child}` : ''}`;
    case 'ralph/verdict':
      return `round ${e.round} ${e.verified ? 'verified' : 'rejected'} by ${e.by}${e.code ? ` ${e.code}` : ''}${e.exitCode !== undefined ? ` (exit ${e.exitCode})` : ''}`;
    case 'ralph/end':
      return `${e.outcome} after round ${e.round}${e.blockerText ? `: ${clip(e.blockerText, 50)}` : ''}`;
    case 'skills/found':
      return `${e.skills.length} skills${e.warnings.length ? `, ${e.warnings.length} warnings (${[...new Set(e.warnings.map((w) => w.code))].join(', ')})` : ''}`;
    case 'mcp/server':
      return e.outcome !== 'failed' ? `${e.server} ${e.outcome}, ${e.tools.length} tools${e.problems.length ? `, ${e.problems.length} left out` : ''}` : `${e.server} failed ${e.code ?? ''}: ${clip(e.message ?? '', 60)}`;
  }
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
