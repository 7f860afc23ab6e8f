/**
 * Path model of `tool-call`: small and acyclic, so every simple path is run.
 * Invariants: a path to `done` records exactly one `tool/result` (I2); no
 * path records `tool/dispatch` without a passed validation, an allow (policy
 * allow or an approval that allowed) and a release (I4, I6); a cancel gives
 * ABORTED_BEFORE_DISPATCH before dispatch and ABORTED after it (I5); the
 * tool body never starts while the dispatch's flush is pending (two-phase
 * dispatch), in both worlds: a log durable on append, and one that is not;
 * a read-only, idempotent call flushes nothing of its own (ADR 0072);
 * a flush that fails never runs the tool after it and is reported in the
 * output (`unsaved`), so the step stops (ADR 0017).
 * Started with an answer the log holds (a step gone on with, ADR 0031): it
 * never asks nor logs an answer again; it dispatches only when that answer
 * allowed it (or the policy did), and a logged no is a denied result.
 */
import { assign, type AnyEventObject } from 'xstate';
import { countKind, draftsOf, type PathModel, type PathRun } from './path-model.js';

const isOk = (e: AnyEventObject, state: string) => e.type === `xstate.done.actor.0.tool-call.${state}`;
const isFailed = (e: AnyEventObject, state: string) => e.type === `xstate.error.actor.0.tool-call.${state}`;

/** Index (1-based, as `at`) of the first sent event matching `pred`, or Infinity. */
const firstAt = (run: PathRun, pred: (e: AnyEventObject) => boolean) => {
  const i = run.sent.findIndex(pred);
  return i < 0 ? Infinity : i + 1;
};

function check(run: PathRun): string[] {
  const problems: string[] = [];
  const results = draftsOf(run, 'tool/result');
  if (run.done && results.length !== 1) problems.push(`I2: a path to done recorded ${results.length} tool/result entries`);
  if (results.length > 1) problems.push(`I2: ${results.length} tool/result entries for one call`);

  const answered = (run.input as { answered?: { outcome: string } }).answered;
  const answeredYes = answered !== undefined && /^allowed-/.test(answered.outcome);
  // Validated as it is created (ADR 0033): before any event, or never.
  const validAt = (run.final.context as { validation?: { ok?: boolean } }).validation?.ok === true ? 0 : Infinity;
  const allowAt = Math.min(
    firstAt(run, (e) => isOk(e, 'checking') && (e.output as { kind?: string }).kind === 'allow'),
    firstAt(run, (e) => isOk(e, 'asking') && /^allowed-/.test(String((e.output as { outcome?: string }).outcome))),
    // A logged allow stands in for the question the decision asks.
    answeredYes ? firstAt(run, (e) => isOk(e, 'checking') && (e.output as { kind?: string }).kind === 'ask') : Infinity,
  );
  const releasedAt = firstAt(run, (e) => e.type === 'tool.call.released');
  const dispatches = draftsOf(run, 'tool/dispatch');
  if (dispatches.length > 1) problems.push(`tool/dispatch recorded ${dispatches.length} times`);
  for (const d of dispatches) {
    if (d.at < validAt) problems.push('I4: tool/dispatch without a passed validation');
    if (d.at < allowAt) problems.push('I6: tool/dispatch without an allow (policy allow or approval allowed)');
    if (d.at < releasedAt) problems.push('tool/dispatch before the step released the call');
  }
  const readyAt = run.toParent.find((p) => p.event.type === 'tool.call.ready')?.at ?? Infinity;
  if (readyAt < Math.max(validAt, allowAt)) problems.push('tool.call.ready told the step before validation and allow');

  const cancelAt = firstAt(run, (e) => e.type === 'tool.cancel.requested');
  if (cancelAt !== Infinity) {
    const r = results[0];
    const dispatched = dispatches.length > 0 && dispatches[0]!.at < cancelAt;
    const want = dispatched ? 'ABORTED' : 'ABORTED_BEFORE_DISPATCH';
    const settledBefore = r !== undefined && r.at < cancelAt;
    if (!settledBefore && r?.draft.code !== want) problems.push(`I5: a cancel ${dispatched ? 'after' : 'before'} dispatch gave ${r?.draft.code ?? 'no result'}, not ${want}`);
  }
  const asked = countKind(run, 'approval/asked');
  const decided = countKind(run, 'approval/decided');
  if (answered !== undefined) {
    if (asked + decided > 0) problems.push(`a call the log holds the answer of logged ${asked} asked, ${decided} decided again`);
    if (run.children.some((c) => c.src === 'askApproval')) problems.push('a call the log holds the answer of asked again');
    // A logged no denies whatever the policy decides now; it never dispatches.
    const decidedAt = firstAt(run, (e) => isOk(e, 'checking'));
    const r = results[0];
    if (!answeredYes && decidedAt !== Infinity && cancelAt > decidedAt && r?.draft.status !== 'denied') problems.push(`a logged ${answered.outcome} gave ${r?.draft.status ?? 'no result'}, not denied`);
    if (!answeredYes && dispatches.length > 0) problems.push(`a logged ${answered.outcome} was dispatched`);
  }
  if (decided > asked || asked > 1) problems.push(`approval: ${asked} asked, ${decided} decided`);
  if (run.done && decided !== asked) problems.push('approval asked but never decided on a path to done');
  const body = run.children.find((c) => c.src === 'executeTool');
  const flushedAt = firstAt(run, (e) => isOk(e, 'flushingDispatch'));
  if (body && run.children.some((c) => c.src === 'flushLog' && c.born <= body.born) && flushedAt > body.born) {
    problems.push('the tool body started before its dispatch was flushed');
  }
  // ADR 0072: a read-only, idempotent call flushes nothing of its own; its entries ride the next flush.
  const v = (run.final.context as { validation?: { ok?: boolean; readOnly?: boolean; idempotent?: boolean } }).validation;
  if (v?.ok && v.readOnly && v.idempotent && run.children.some((c) => c.src === 'flushLog')) problems.push('a read-only, idempotent call flushed the log');
  // A flush that failed: the tool does not run after it, and the output says so.
  const failedDispatchAt = firstAt(run, (e) => isFailed(e, 'flushingDispatch'));
  if (failedDispatchAt !== Infinity && run.children.some((c) => c.src === 'executeTool' && c.born >= failedDispatchAt)) problems.push('the tool ran after its dispatch could not be made durable');
  const flushFailed = run.sent.some((e) => isFailed(e, 'flushingDispatch') || isFailed(e, 'flushingResult'));
  const out = run.done ? (run.final.output as { unsaved?: string }) : undefined;
  if (out && flushFailed && out.unsaved === undefined) problems.push('a flush failed, but the output does not say so');
  if (out && !flushFailed && out.unsaved !== undefined) problems.push('the output says unsaved, but no flush failed');
  // Each failed flush is noted in the log, in the same transition, right after what it was to save.
  const failures = run.sent.filter((e) => isFailed(e, 'flushingDispatch') || isFailed(e, 'flushingResult')).length;
  if (countKind(run, 'log/not-durable') !== failures) problems.push(`${failures} flushes failed, ${countKind(run, 'log/not-durable')} notes say so`);
  if (run.before[0] !== undefined && run.before[0].context.validation === undefined) problems.push('the call was not validated as it was created');
  if (run.before.some((s) => s.value === 'validating')) problems.push('a call waited in validating: it is validated as it is created');
  return problems;
}

export const toolCallModel: PathModel = {
  generator: 'simple',
  // The whole context that guards and drafts read; finite because every output is.
  abstract: (s) => ({ validation: s.context.validation ?? null, reason: s.context.reason ?? null, unsaved: s.context.unsaved !== undefined }),
  input: { turn: 't1', step: 't1.s1', callId: 't1.s1.c1', toolCallId: 'call_1', name: 'probe', arguments: '{}' },
  // A step gone on with hands a call the answer its log holds (ADR 0031): a yes, and a no.
  inputs: [
    { name: 'answered yes', input: { turn: 't1', step: 't1.s1', callId: 't1.s1.c1', toolCallId: 'call_1', name: 'probe', arguments: '{}', answered: { outcome: 'allowed-once', by: 'fork' } } },
    { name: 'answered no', input: { turn: 't1', step: 't1.s1', callId: 't1.s1.c1', toolCallId: 'call_1', name: 'probe', arguments: '{}', answered: { outcome: 'rejected', by: 'fork' } } },
  ],
  // A store durable on append skips both flushes; any other store flushes at dispatch and at the result (but for a read-only, idempotent call).
  worlds: [{ isLogDurable: false }, { isLogDurable: true }],
  // The host's validateCall assigns the validation as the call is created: read-only (idempotent or not, as a delegation), writing, or rejected.
  assigns: (
    [
      ['valid read-only', { ok: true, readOnly: true, idempotent: true, args: {} }],
      ['valid read-only, not idempotent', { ok: true, readOnly: true, idempotent: false, args: {} }],
      ['valid writing', { ok: true, readOnly: false, idempotent: false, args: {} }],
      ['invalid', { ok: false, code: 'INVALID_ARGUMENTS', message: 'bad arguments' }],
    ] as const
  ).map(([name, validation]) => ({ name, actions: { validateCall: assign({ validation: () => validation }) } })),
  outputs: {
    decideCall: [{ kind: 'allow' }, { kind: 'ask', reason: 'it writes' }, { kind: 'deny', reason: 'policy says no' }],
    askApproval: [
      { outcome: 'allowed-once', by: 'tester' },
      { outcome: 'allowed-always', by: 'tester' },
      { outcome: 'rejected', by: 'tester' },
      { outcome: 'unavailable', by: 'tester' },
    ],
    executeTool: [
      { status: 'ok', content: 'done' },
      { status: 'error', content: 'it broke', code: 'TOOL_ERROR' },
    ],
  },
  check,
};
