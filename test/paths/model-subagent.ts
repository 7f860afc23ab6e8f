/**
 * Path model of `subagent`: small and acyclic, so every simple path is run.
 * Invariants: the parent's bracket opens at most once, only after the
 * registry admitted the request, and before anything closes it; a path to
 * final closes it exactly once when it opened and never when it did not (a
 * refused or unborn delegation leaves no trace in the parent's log); a
 * cancel of a running child closes the bracket in the same step as the
 * cancel, `aborted` with the cancel's code; a crash is a failed result with
 * a named code, never a hang; the result is always there at the end, `ok`
 * only for a child whose turn completed, and it says whether a child was
 * created.
 */
import type { AnyEventObject } from 'xstate';
import { draftsOf, type PathModel, type PathRun } from './path-model.js';

const done = (state: string) => (e: AnyEventObject) => e.type === `xstate.done.actor.0.subagent.${state}`;
const failed = (state: string) => (e: AnyEventObject) => e.type === `xstate.error.actor.0.subagent.${state}`;
const firstAt = (run: PathRun, pred: (e: AnyEventObject) => boolean) => {
  const i = run.sent.findIndex(pred);
  return i < 0 ? Infinity : i + 1;
};

function check(run: PathRun): string[] {
  const problems: string[] = [];
  const starts = draftsOf(run, 'subagent/start');
  const ends = draftsOf(run, 'subagent/end');
  if (starts.length > 1 || ends.length > 1) problems.push(`${starts.length} subagent/start and ${ends.length} subagent/end for one delegation`);
  if (ends.length > starts.length) problems.push('subagent/end without a subagent/start');
  if (run.done && ends.length !== starts.length) problems.push('a path to final left the bracket open');
  const admittedAt = firstAt(run, (e) => done('requested')(e) && (e.output as { ok?: boolean }).ok === true);
  const openedAt = firstAt(run, done('admitted'));
  for (const s of starts) if (s.at < Math.max(admittedAt, openedAt)) problems.push('subagent/start before the registry admitted the request and the child existed');
  if (starts[0] && ends[0] && ends[0].at < starts[0].at) problems.push('the bracket closed before it opened');
  if (run.drafts.length > 0 && run.drafts[0]!.draft.kind !== 'subagent/start') problems.push(`the first entry is ${run.drafts[0]!.draft.kind}`);

  const cancelAt = firstAt(run, (e) => e.type === 'subagent.cancel.requested');
  const cause = run.sent.find((e) => e.type === 'subagent.cancel.requested')?.cause as string | undefined;
  const out = run.done ? (run.final.output as { status?: string; code?: string; started?: boolean } | undefined) : undefined;
  if (run.done && !out) problems.push('no result at the end');
  if (out && out.started !== starts.length > 0) problems.push(`the result says started: ${out.started}, the log has ${starts.length} subagent/start`);
  if (cancelAt !== Infinity && starts.length === 1 && starts[0]!.at < cancelAt) {
    const end = ends[0];
    const want = cause === 'TREE_BUDGET_EXHAUSTED' ? cause : 'ABORTED';
    if (!end || end.at !== cancelAt || end.draft.reason !== 'aborted' || end.draft.code !== want) problems.push(`a cancel of a running child closed the bracket ${end ? `at event ${end.at} as ${end.draft.reason}/${end.draft.code}` : 'never'}, not at once as aborted/${want}`);
  }
  if (out && cancelAt !== Infinity && out.code !== (cause === 'TREE_BUDGET_EXHAUSTED' ? cause : 'ABORTED')) problems.push(`a cancelled delegation reported ${out.code}`);
  const completed = run.sent.some((e) => done('running')(e) && (e.output as { reason?: string }).reason === 'completed');
  if (out?.status === 'ok' && !completed) problems.push('an ok result from a child that did not complete');
  if (out && completed && cancelAt === Infinity && out.status !== 'ok') problems.push('a completed child reported an error');
  if (run.sent.some(failed('running'))) {
    if (out?.code !== 'SUBAGENT_CRASHED' || ends[0]?.draft.code !== 'SUBAGENT_CRASHED' || ends[0]?.draft.reason !== 'error') problems.push('a crashed child is not a failed result SUBAGENT_CRASHED closing its bracket');
  }
  if (run.sent.some(failed('admitted')) && out?.code !== 'SUBAGENT_OPEN_FAILED') problems.push(`a child that could not be created reported ${out?.code}`);
  if (out?.status === 'ok' && !/\(subagent c1, depth 1, log: memory:c1\)$/.test((run.final.output as { content: string }).content)) problems.push('the report does not name the child and its log');
  return problems;
}

export const subagentModel: PathModel = {
  generator: 'simple',
  input: { callId: 't1.s1.c1', child: 'c1', provider: 'spawn', depth: 1, task: 'look around', reportLimit: 8 },
  abstract: (s) => ({ verdict: s.context.verdict ?? null, started: s.context.started, report: s.context.report ?? null, failure: s.context.failure ?? null, cause: s.context.cause ?? null }),
  payloads: {
    'subagent.cancel.requested': [
      { type: 'subagent.cancel.requested', cause: 'parent' },
      { type: 'subagent.cancel.requested', cause: 'TREE_BUDGET_EXHAUSTED' },
    ],
  },
  outputs: {
    admitRequest: [{ ok: true }, { ok: false, code: 'DEPTH_LIMIT', message: 'delegation depth 2 is over the limit of 1' }],
    openChild: [{ location: 'memory:c1' }],
    runChild: [
      { reason: 'completed', report: 'all fine' },
      { reason: 'completed', report: 'a report longer than its limit' },
      { reason: 'error', code: 'LOG_APPEND_FAILED', report: '' },
    ],
    cancelChild: [undefined],
  },
  check,
};
