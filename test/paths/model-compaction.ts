/**
 * Path model of `compaction`: acyclic, so every simple path is run.
 * Invariants (I9): a bracket is opened at most once and, on a path to final,
 * closed exactly once when opened (never closed when not); everything
 * model-visible it records is a `replace` (it never deletes, it shadows);
 * a summary is logged as its `compaction/summary` plus the replacing message,
 * inside the bracket; the end's outcome says what happened (a cancel is
 * `interrupted`, a logged summary `compacted`); an end that could not be
 * saved is reported in the output (`unsaved`), and only then.
 */
import type { DraftOf } from '../../log/entries.js';
import { countKind, draftsOf, type PathModel, type PathRun } from './path-model.js';

const measure = (tokens: number) => ({ tokens, source: 'estimate', window: 1000, limit: 800 });
const prune: DraftOf<'tool/result'> = {
  kind: 'tool/result',
  turn: 't1',
  step: 't1.s1',
  callId: 't1.s1.c1',
  toolCallId: 'call_1',
  name: 'read_file',
  status: 'ok',
  content: 'head … tail',
  surfaceOp: { op: 'replace', start: 5, end: 5 },
};

function check(run: PathRun): string[] {
  const problems: string[] = [];
  const starts = countKind(run, 'compaction/start');
  const ends = draftsOf(run, 'compaction/end');
  if (starts > 1 || ends.length > 1) problems.push(`I9: ${starts} compaction/start, ${ends.length} compaction/end`);
  if (ends.length > starts) problems.push('I9: compaction/end without a compaction/start');
  if (run.done && ends.length !== starts) problems.push('I9: a path to final left the bracket open');
  // Only the note of a failed flush may follow compaction/end (ADR 0017).
  const closingFailed = run.sent.some((e) => e.type === 'xstate.error.actor.0.compaction.closing');
  const tail = run.drafts.at(-1)?.draft.kind;
  if (ends.length === 1 && tail !== 'compaction/end' && !(closingFailed && tail === 'log/not-durable' && run.drafts.at(-2)?.draft.kind === 'compaction/end')) problems.push('I9: an entry after compaction/end');
  if (closingFailed !== (countKind(run, 'log/not-durable') === 1)) problems.push(`the closing flush ${closingFailed ? 'failed' : 'did not fail'}, and ${countKind(run, 'log/not-durable')} notes say it did`);
  if (starts === 1 && run.drafts[0]?.draft.kind !== 'compaction/start') problems.push('I9: an entry before compaction/start');

  for (const { draft } of run.drafts) {
    const visible = draft.kind === 'user/message' || draft.kind === 'assistant/message' || draft.kind === 'tool/result';
    if (visible && draft.surfaceOp === 'append') problems.push(`I9: compaction appended a model-visible ${draft.kind}; it may only replace`);
  }
  const summaries = draftsOf(run, 'compaction/summary');
  const messages = draftsOf(run, 'user/message').filter((m) => m.draft.origin === 'summary');
  if (summaries.length !== messages.length || summaries.length > 1) problems.push(`I9: ${summaries.length} compaction/summary for ${messages.length} summary messages`);
  const s = summaries[0]?.draft;
  const msg = messages[0]?.draft;
  if (s && msg && (msg.surfaceOp === 'append' || msg.surfaceOp.start !== s.start || msg.surfaceOp.end !== s.end)) problems.push('I9: the summary message does not replace the span its compaction/summary names');

  const end = ends[0]?.draft;
  const cancelled = run.sent.some((e) => e.type === 'compaction.cancel.requested');
  if (end && cancelled && end.outcome !== 'interrupted') problems.push(`a cancelled compaction ended ${end.outcome}`);
  if (end && summaries.length === 1 && !cancelled && end.outcome !== 'compacted') problems.push(`a logged summary ended ${end.outcome}`);
  if (run.done) {
    const failed = closingFailed;
    const out = run.final.output as { unsaved?: string };
    if (failed !== (out.unsaved !== undefined)) problems.push(failed ? 'compaction/end could not be saved, but the output does not say so' : 'the output says unsaved, but the flush did not fail');
  }
  return problems;
}

export const compactionModel: PathModel = {
  generator: 'simple',
  input: { trigger: 'proactive', turn: 't1' },
  // The context holds only what the scripted outputs put there: finite as it is.
  abstract: (s) => s.context,
  // The synchronous phases answer with events (the host's actions do so at once); the path sends each answer.
  payloads: {
    'compaction.measured': [
      { type: 'compaction.measured', measure: measure(900) },
      { type: 'compaction.measured', measure: measure(300) },
    ],
    'compaction.measure.failed': [{ type: 'compaction.measure.failed', error: 'the meter threw' }],
    'compaction.pruned': [
      { type: 'compaction.pruned', drafts: [] },
      { type: 'compaction.pruned', drafts: [prune] },
    ],
    'compaction.prune.failed': [{ type: 'compaction.prune.failed', error: 'the planner threw' }],
    'compaction.planned': [
      { type: 'compaction.planned', plan: null },
      { type: 'compaction.planned', plan: { start: 2, end: 6, turn: 't1', request: { messages: [] } } },
    ],
    'compaction.plan.failed': [{ type: 'compaction.plan.failed', error: 'the planner threw' }],
  },
  outputs: {
    requestSummary: [
      { ok: true, text: 'What happened so far.' },
      { ok: true, text: '   ' },
      { ok: false, code: 'RATE_LIMIT', message: 'slow down' },
    ],
  },
  check,
};
