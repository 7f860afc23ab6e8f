/**
 * Path model of `turn`. The step and compaction children are played by the
 * path: their done events carry every kind of outcome (an overflowed request
 * included), and the pressure guard says under or over the limit (two worlds). Invariants: one `turn/start` on
 * every path and one `turn/end` on every path to final (I3), the end last;
 * steps are numbered in order; a cancel reaches the running step or
 * compaction and the turn then ends `aborted`; queued
 * steer and inject input is either logged before a step or handed back in
 * the output, never lost or doubled, and each logged message names the
 * input it delivers (`from`, ADR 0021); a turn whose end, or whose step's or
 * compaction's entries, could not be saved reports `error` LOG_NOT_DURABLE
 * and asks the model nothing more (ADR 0017). A turn gone on with after a
 * restart (ADR 0027) logs no turn/start and no input again, goes on with the
 * step it stopped in (numbered as logged, handed its calls), delivers no
 * queued input into that step, and counts its steps from the log's. A spent
 * budget (ADR 0047, a third world) stops the turn before the next step: a
 * raise goes on measuring, anything else ends it BUDGET_EXHAUSTED with no step
 * after; a turn gone on with at a budget question asks again first.
 */
import type { AnyMachineSnapshot } from 'xstate';
import { childAt, countKind, draftsOf, type PathModel, type PathRun } from './path-model.js';

const MAX_STEPS = 2;

/** The last step's outcome is read only in `deciding`, a transient state, right after the step: it is not kept. */
function abstract(s: AnyMachineSnapshot) {
  return {
    // Steps past the limit behave alike; a steer loop could otherwise count forever.
    steps: Math.min(s.context.steps, MAX_STEPS),
    steer: s.context.steer.length > 0,
    inject: s.context.inject.length > 0,
    cancelled: s.context.cancelled,
    trigger: s.context.trigger ?? null,
    overflowRetried: s.context.overflowRetried ?? false,
    end: s.context.end?.reason ?? null,
  };
}

const RESUMED_STEPS = 1;
const RESUMED_STEP = { blocks: [{ type: 'tool-call', id: 'call_a', name: 'write', arguments: '{}' }], finish: { kind: 'ok', reason: 'tool-calls' }, settled: [] };

function check(run: PathRun): string[] {
  const problems: string[] = [];
  const atBudget = (run.input as { resumeBudget?: unknown }).resumeBudget !== undefined;
  const resumedStep = (run.input as { resume?: unknown }).resume !== undefined;
  const resumed = resumedStep || atBudget;
  const starts = countKind(run, 'turn/start');
  const ends = countKind(run, 'turn/end');
  if (starts !== (resumed ? 0 : 1)) problems.push(`I3: ${starts} turn/start entries${resumed ? ' in a turn gone on with' : ''}`);
  if (!resumed && run.drafts[0]?.draft.kind !== 'turn/start') problems.push('I3: turn/start is not the first entry');
  if (run.done && ends !== 1) problems.push(`I3: a path to final recorded ${ends} turn/end entries`);
  if (ends > 1) problems.push(`I3: ${ends} turn/end entries`);
  // Only the note of its failed flush may follow turn/end (ADR 0017); a failed flush is noted exactly once.
  const endFlushFailed = run.sent.some((e) => e.type === 'xstate.error.actor.0.turn.ending');
  const tail = run.drafts.at(-1)?.draft.kind;
  if (ends === 1 && tail !== 'turn/end' && !(endFlushFailed && tail === 'log/not-durable' && run.drafts.at(-2)?.draft.kind === 'turn/end')) problems.push('I3: an entry after turn/end');
  if (endFlushFailed !== (countKind(run, 'log/not-durable') === 1)) problems.push(`turn/end's flush ${endFlushFailed ? 'failed' : 'did not fail'}, and ${countKind(run, 'log/not-durable')} notes say it did`);

  const steps = run.children.filter((c) => c.src === 'step');
  const first = resumedStep ? RESUMED_STEPS : atBudget ? RESUMED_STEPS + 1 : 1;
  steps.forEach((c, i) => {
    if ((c.input as { step: string }).step !== `t1.s${first + i}`) problems.push(`step ${i + 1} was numbered ${(c.input as { step: string }).step}`);
    // Only the step gone on with is handed its logged calls; the steps after it ask the model.
    if (((c.input as { resume?: unknown }).resume !== undefined) !== (resumedStep && i === 0)) problems.push(`step ${(c.input as { step: string }).step} was ${resumedStep && i === 0 ? 'not ' : ''}handed a resumed step`);
  });
  const end = draftsOf(run, 'turn/end')[0]?.draft;
  if (end && end.steps !== first - 1 + steps.length) problems.push(`turn/end says ${end.steps} steps, ${first - 1 + steps.length} ran`);
  // Nothing reaches the model between a resumed step's calls and their results: queued input waits for the next step.
  if (resumedStep && steps[0]) {
    const firstDone = run.sent.findIndex((e) => e.type === 'xstate.done.actor.step' || e.type === 'xstate.done.actor.0.turn.stepping');
    if (draftsOf(run, 'user/message').some((d) => firstDone < 0 || d.at <= firstDone)) problems.push('a user/message was logged inside the resumed step');
  }

  // A cancel reaches whatever child is running: the step, or the compaction.
  run.sent.forEach((e, i) => {
    if (e.type !== 'turn.cancel.requested') return;
    const before = run.before[i]!;
    const running = before.matches('stepping') ? 'step' : before.matches('compacting') ? 'compaction' : undefined;
    if (!running) return;
    const child = childAt(run, running, i + 1);
    if (!child?.received.some((r) => r.at === i + 1 && r.event.type === `${running}.cancel.requested`)) problems.push(`a cancel in ${running === 'step' ? 'stepping' : 'compacting'} never reached the ${running}`);
  });
  const cancelAt = run.sent.findIndex((e) => e.type === 'turn.cancel.requested');
  const endAt = draftsOf(run, 'turn/end')[0]?.at ?? -1;
  if (end && cancelAt >= 0 && endAt > cancelAt && end.reason !== 'aborted') problems.push(`a cancelled turn ended ${end.reason}`);

  // Save before notify: a flush that failed is what the turn reports, and no step runs after an unsaved compaction.
  const unsavedAt = run.sent.findIndex((e) => (e.type === 'xstate.done.actor.0.turn.compacting' && (e.output as { unsaved?: string }).unsaved !== undefined) || (e.type === 'xstate.done.actor.0.turn.stepping' && (e.output as { code?: string }).code === 'LOG_NOT_DURABLE'));
  const endFailed = run.sent.some((e) => e.type === 'xstate.error.actor.0.turn.ending');
  // A cancel that came first still ends the turn `aborted`; the end's own flush then says whether the log was saved.
  if (run.done && (endFailed || (unsavedAt >= 0 && (cancelAt < 0 || cancelAt > unsavedAt)))) {
    const out = run.final.output as { reason: string; code?: string };
    if (out.reason !== 'error' || out.code !== 'LOG_NOT_DURABLE') problems.push(`the log could not be saved, but the turn reports ${out.reason} ${out.code ?? ''}`);
  }
  if (unsavedAt >= 0 && steps.some((c) => c.born > unsavedAt)) problems.push('a step ran after the log could not be saved');

  // A budget the host did not raise ends the turn BUDGET_EXHAUSTED (unless a cancel came first), and no model call follows.
  const refusedAt = run.sent.findIndex((e) => e.type === 'xstate.done.actor.0.turn.budgeting' && (e.output as { go: boolean }).go === false);
  if (refusedAt >= 0) {
    if (steps.some((c) => c.born > refusedAt)) problems.push('a step ran after the budget was refused');
    if (end && (cancelAt < 0 || cancelAt > refusedAt) && end.code !== 'BUDGET_EXHAUSTED' && end.code !== 'LOG_NOT_DURABLE') problems.push(`a refused budget ended the turn ${end.reason} ${end.code ?? ''}`);
  }
  const answeredAt = run.sent.findIndex((e) => e.type === 'xstate.done.actor.0.turn.budgeting');
  if (atBudget && steps[0] && (answeredAt < 0 || steps[0].born <= answeredAt)) problems.push('a turn gone on with at a budget question stepped before it was answered');

  // Whatever takes a logged input names it (ADR 0021): the turn its input, each delivered steer and inject theirs.
  if (run.drafts[0]?.draft.kind === 'turn/start' && (run.drafts[0].draft as { from?: number }).from !== 7) problems.push('turn/start does not name the input it took (from)');
  for (const d of draftsOf(run, 'user/message')) {
    const want = d.draft.origin === 'steer' ? 8 : d.draft.origin === 'inject' ? (d.draft.text === 'context' ? 6 : 9) : undefined;
    if ((d.draft as { from?: number }).from !== want) problems.push(`a ${d.draft.origin} user/message names input ${(d.draft as { from?: number }).from}, not ${want}`);
  }
  if (run.done) {
    const out = run.final.output as { leftoverSteer: unknown[]; leftoverInject: unknown[] };
    const logged = (origin: string) => draftsOf(run, 'user/message').filter((d) => d.draft.origin === origin).length;
    const steered = run.sent.filter((e) => e.type === 'turn.input.steered').length;
    const injected = run.sent.filter((e) => e.type === 'turn.input.injected').length + 1; // + the input's own injected context
    if (logged('steer') + out.leftoverSteer.length !== steered) problems.push(`steer: ${steered} queued, ${logged('steer')} logged, ${out.leftoverSteer.length} handed back`);
    if (logged('inject') + out.leftoverInject.length !== injected) problems.push(`inject: ${injected} queued, ${logged('inject')} logged, ${out.leftoverInject.length} handed back`);
  }
  return problems;
}

export const turnModel: PathModel = {
  generator: 'shortest',
  input: { turn: 't1', input: 'fix the test', from: 7, injected: [{ seq: 6, text: 'context' }], maxSteps: MAX_STEPS },
  inputs: [
    { name: 'resumed', input: { turn: 't1', input: 'fix the test', from: 7, injected: [{ seq: 6, text: 'context' }], maxSteps: MAX_STEPS, resume: { steps: RESUMED_STEPS, step: RESUMED_STEP } } },
    { name: 'resumed at a budget question', input: { turn: 't1', input: 'fix the test', from: 7, injected: [{ seq: 6, text: 'context' }], maxSteps: MAX_STEPS, resumeBudget: { steps: RESUMED_STEPS } } },
  ],
  // The pressure guard measures the next request: under the threshold, or at/over it (compaction before each step); or the budget is spent.
  worlds: [{ isOverThreshold: false }, { isOverThreshold: true }, { isOverThreshold: false, isOverBudget: true }],
  payloads: {
    'turn.input.steered': [{ type: 'turn.input.steered', seq: 8, text: 'steer' }],
    'turn.input.injected': [{ type: 'turn.input.injected', seq: 9, text: 'inject' }],
    'turn.cancel.requested': [{ type: 'turn.cancel.requested', cause: 'user' }],
  },
  outputs: {
    runPreStep: [
      { kind: 'enter', text: 'fix the test' },
      { kind: 'reject', reason: 'off topic' },
      // A rewrite to nothing: the turn closes completed with zero steps.
      { kind: 'enter', text: '' },
    ],
    step: [
      { reason: 'tool-calls', finish: { kind: 'ok', reason: 'tool-calls' } },
      { reason: 'stop', finish: { kind: 'ok', reason: 'stop' } },
      { reason: 'length', finish: { kind: 'ok', reason: 'length' } },
      { reason: 'error', code: 'AUTH' },
      { reason: 'error', code: 'CONTEXT_WINDOW_EXCEEDED', recovery: 'compact' },
      { reason: 'error', code: 'CONTEXT_WINDOW_EXCEEDED' },
      { reason: 'error', code: 'LOG_NOT_DURABLE', cause: 'EIO' },
      { reason: 'aborted' },
    ],
    askBudget: [{ go: true }, { go: false, cause: 'tokens 1200/1000 used' }],
    compaction: [
      { outcome: 'compacted', tokensBefore: 900, tokensAfter: 300, shrank: true },
      { outcome: 'failed', tokensBefore: 900, tokensAfter: 900, shrank: false },
      { outcome: 'compacted', tokensBefore: 900, tokensAfter: 300, shrank: true, unsaved: 'EIO' },
    ],
  },
  abstract,
  check,
};
