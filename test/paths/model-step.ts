/**
 * Path model of `step`. The model's stream is a small chunk alphabet (a text
 * block, two tool-call blocks, every kind of finish) and the tool-call
 * children are played by the driver: `tool.call.ready` and the children's
 * done events come from the path, and before a child's done event the driver
 * records that call's `tool/result`, as a real child does (its result is
 * durable before the step hears of it).
 * Invariants: one step/start, one step/end exactly on paths to final; a
 * half-streamed call never becomes a `tool/call`; every call has a result
 * before the step ends, whatever the path (cancel and error included); the
 * model reads results in call order (projection); calls are released in
 * order (a writing call only after every earlier call settled); a cancel
 * reaches every unsettled call; the request is prepared once, right after
 * step/start; a call whose dispatch or result could not be saved ends the
 * step `error` LOG_NOT_DURABLE (`aborted` when a cancel came first), so the
 * model is not asked again (ADR 0017). A step gone on with after a restart
 * (ADR 0027) logs no step/start, answer or tool/call again, prepares no
 * request, and gives a result exactly to each call that had none.
 */
import type { AnyEventObject, AnyMachineSnapshot } from 'xstate';
import { deriveMessages } from '../../log/derive-messages.js';
import { Entry } from '../../log/entries.js';
import type { Block } from '../../log/entry-values.js';
import type { Assembly } from '../../log/chunks.js';
import type { CallSlot } from '../../machines/schedule-calls.js';
import { countKind, draftsOf, type PathModel, type PathRun } from './path-model.js';

const chunk = (c: unknown): AnyEventObject => ({ type: 'model.chunk.received', chunk: c });
const FINISHES = [
  { kind: 'ok', reason: 'stop' },
  { kind: 'ok', reason: 'length' },
  { kind: 'ok', reason: 'tool-calls' },
  { kind: 'error', code: 'RATE_LIMIT', message: 'slow down' },
  { kind: 'error', code: 'AUTH', message: 'bad key' },
  { kind: 'aborted' },
].map((finish) => chunk({ type: 'finish', finish }));

function chunks(a: Assembly): AnyEventObject[] {
  const out: AnyEventObject[] = [];
  const [text, first, second] = [a.blocks[0], a.blocks[1], a.blocks[2]];
  if (!text) out.push(chunk({ type: 'block-start', index: 0, block: { type: 'text' } }));
  else if (text.type === 'text' && text.text === '' && a.open.has(0)) out.push(chunk({ type: 'text-delta', index: 0, text: 'Hi' }));
  if (!first) out.push(chunk({ type: 'block-start', index: 1, block: { type: 'tool-call', id: 'call_a', name: 'read' } }));
  else if (!second) out.push(chunk({ type: 'block-start', index: 2, block: { type: 'tool-call', id: 'call_b', name: 'write' } }));
  return [...out, ...FINISHES];
}

function events(s: AnyMachineSnapshot, type: string): AnyEventObject[] | undefined {
  const calls = s.context.calls as CallSlot[];
  if (type === 'model.chunk.received') return chunks(s.context.assembly as Assembly);
  if (type === 'tool.call.ready') {
    return calls.filter((c) => c.phase === 'pending').flatMap((c) => [true, false].map((readOnly) => ({ type, callId: c.callId, readOnly })));
  }
  if (type === 'xstate.done.actor.*') {
    return calls
      .filter((c) => c.phase !== 'settled')
      .flatMap((c) => [{ type: `xstate.done.actor.${c.callId}`, output: { callId: c.callId } }, { type: `xstate.done.actor.${c.callId}`, output: { callId: c.callId, unsaved: 'EIO' } }]);
  }
  return undefined;
}

function abstract(s: AnyMachineSnapshot) {
  const a = s.context.assembly as Assembly;
  const calls = (s.context.calls as CallSlot[]).map((c) => `${c.phase}${c.readOnly ? ':ro' : ''}`);
  // Once the calls are out, only they, the cancel and "was it cut by length" steer the step; the stream's history does not.
  if (s.matches('calling') || s.matches('ending')) {
    const length = a.finish?.kind === 'ok' && a.finish.reason === 'length';
    return { calls, cancelled: s.context.cancelled, length, unsaved: s.context.unsaved !== undefined, output: s.context.output?.reason ?? null };
  }
  const text = a.blocks.find((b) => b?.type === 'text');
  return {
    // Retries are the listeners' to bound: one failure or more is what steers the step.
    failures: Math.min(s.context.failures, 1),
    cancelled: s.context.cancelled,
    text: text ? (text.type === 'text' && text.text ? 'text' : 'empty') : 'none',
    toolBlocks: a.blocks.filter((b) => b?.type === 'tool-call').length,
    finish: a.finish ? (a.finish.kind === 'error' ? a.finish.code : a.finish.kind === 'ok' ? a.finish.reason : 'aborted') : null,
    output: s.context.output?.reason ?? null,
  };
}

/** A step a process left waiting on an approval of its second call, the first one settled (ADR 0027). */
const RESUMED_BLOCKS: Block[] = [
  { type: 'text', text: 'two calls' },
  { type: 'tool-call', id: 'call_a', name: 'read', arguments: '{}' },
  { type: 'tool-call', id: 'call_b', name: 'write', arguments: '{}' },
];
const RESUMED_CALLS = [
  { turn: 't1', step: 't1.s2', callId: 't1.s2.c1', toolCallId: 'call_a', name: 'read' },
  { turn: 't1', step: 't1.s2', callId: 't1.s2.c2', toolCallId: 'call_b', name: 'write' },
];
const RESUMED_SETTLED = ['t1.s2.c1'];
const isResumedRun = (run: PathRun) => (run.input as { resume?: unknown }).resume !== undefined;

/** The calls of the step: as it logged them, or (gone on with) as the log before it held them. */
const callsOfRun = (run: PathRun) => (isResumedRun(run) ? RESUMED_CALLS : draftsOf(run, 'tool/call').map((d) => d.draft));

/** The driver plays the child: its tool/result is recorded (and durable) before its done event. */
function beforeSend(run: PathRun, event: AnyEventObject): void {
  const m = /^xstate\.done\.actor\.(t\d+\.s\d+\.c\d+)$/.exec(event.type);
  if (!m) return;
  const call = callsOfRun(run).find((d) => d.callId === m[1])!;
  const { turn, step, callId, toolCallId, name } = call;
  run.drafts.push({ draft: { kind: 'tool/result', turn, step, callId, toolCallId, name, status: 'ok', content: `result of ${callId}`, surfaceOp: 'append' }, at: run.sent.length });
}

const sentAt = (run: PathRun, pred: (e: AnyEventObject) => boolean) => {
  const i = run.sent.findIndex(pred);
  return i < 0 ? Infinity : i + 1;
};

function checkOrder(run: PathRun, problems: string[]): void {
  const calls = callsOfRun(run).map((d) => d.callId);
  const readyAt = (id: string) => sentAt(run, (e) => e.type === 'tool.call.ready' && e.callId === id);
  const settledAt = (id: string) => (isResumedRun(run) && RESUMED_SETTLED.includes(id) ? 0 : sentAt(run, (e) => e.type === `xstate.done.actor.${id}`));
  const readOnly = (id: string) => run.sent.find((e) => e.type === 'tool.call.ready' && e.callId === id)?.readOnly === true;
  for (const child of run.children.filter((c) => c.src === 'toolCall')) {
    const k = calls.indexOf(child.id);
    for (const r of child.received.filter((x) => x.event.type === 'tool.call.released')) {
      if (readyAt(child.id) > r.at) problems.push(`${child.id} released before it was ready`);
      for (const earlier of calls.slice(0, k)) {
        const settled = settledAt(earlier) <= r.at;
        if (!settled && !(readOnly(child.id) && readOnly(earlier) && readyAt(earlier) <= r.at)) {
          problems.push(`${child.id} released while the earlier ${earlier} had not settled`);
        }
      }
    }
  }
  const cancelAt = sentAt(run, (e) => e.type === 'step.cancel.requested');
  for (const child of run.children.filter((c) => c.src === 'toolCall')) {
    if (cancelAt === Infinity || settledAt(child.id) < cancelAt) continue;
    if (!child.received.some((x) => x.event.type === 'tool.cancel.requested')) problems.push(`I5: the cancel never reached ${child.id}`);
  }
}

function checkProjection(run: PathRun, problems: string[]): void {
  const entries = run.drafts.map((d, i) => Entry.parse({ seq: i + 1, at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), ...d.draft }));
  const messages = deriveMessages(entries);
  const a = messages.find((m) => m.role === 'assistant' && m.toolCalls);
  if (!a || a.role !== 'assistant') return;
  const want = a.toolCalls!.map((c) => c.id);
  const got = messages.filter((m) => m.role === 'tool').map((m) => (m.role === 'tool' ? m.toolCallId : ''));
  const ranks = got.map((id) => want.indexOf(id));
  if (ranks.some((r, i) => r < 0 || (i > 0 && r <= ranks[i - 1]!)) || (run.done && got.length !== want.length)) {
    problems.push(`I2: the model would read results ${got.join(',')} for calls ${want.join(',')}`);
  }
}

/** A step gone on with: nothing it logged before is logged again; each call without a result gets one, once. */
function checkResumed(run: PathRun): string[] {
  const problems: string[] = [];
  for (const kind of ['step/start', 'assistant/message', 'tool/call'] as const) if (countKind(run, kind) !== 0) problems.push(`a resumed step logged ${kind} again`);
  if (countKind(run, 'step/end') !== (run.done ? 1 : 0)) problems.push(`${countKind(run, 'step/end')} step/end entries on a path that is ${run.done ? '' : 'not '}final`);
  if (run.effects.some((e) => e.action === 'prepareRequest')) problems.push('a resumed step prepared a request: its answer is logged already');
  if (run.children.some((c) => RESUMED_SETTLED.includes(c.id))) problems.push('a call that had its result ran again');
  // A call the log holds the answer of is handed that answer, and only that call (ADR 0031).
  const answered = (run.input as { resume: { answered?: Record<string, unknown> } }).resume.answered ?? {};
  for (const c of run.children.filter((x) => x.src === 'toolCall')) {
    const got = JSON.stringify((c.input as { answered?: unknown }).answered);
    if (got !== JSON.stringify(answered[c.id])) problems.push(`${c.id} was spawned with answer ${got}, the log holds ${JSON.stringify(answered[c.id])}`);
  }
  const results = draftsOf(run, 'tool/result');
  for (const c of RESUMED_CALLS) {
    const n = results.filter((r) => r.draft.callId === c.callId).length;
    const owed = RESUMED_SETTLED.includes(c.callId) ? 0 : 1;
    if (n > owed || (run.done && n !== owed)) problems.push(`${c.callId} has ${n} results after the resume on a path that is ${run.done ? '' : 'not '}final`);
  }
  checkOrder(run, problems);
  return problems;
}

function check(run: PathRun): string[] {
  if (isResumedRun(run)) return checkResumed(run);
  const problems: string[] = [];
  if (countKind(run, 'step/start') !== 1) problems.push(`${countKind(run, 'step/start')} step/start entries`);
  if (countKind(run, 'step/end') !== (run.done ? 1 : 0)) problems.push(`${countKind(run, 'step/end')} step/end entries on a path that is ${run.done ? '' : 'not '}final`);
  const answers = draftsOf(run, 'assistant/message');
  if (answers.length > 1) problems.push(`${answers.length} assistant messages in one step`);
  const calls = draftsOf(run, 'tool/call');
  const blocks: Block[] = answers[0]?.draft.blocks ?? [];
  const answered = answers[0]?.draft.finish.kind === 'ok';
  if (!answered && blocks.some((b) => b.type === 'tool-call')) problems.push('a failed or interrupted answer kept a half-streamed tool call');
  const wanted = answered ? blocks.filter((b) => b.type === 'tool-call').map((b) => b.id) : [];
  if (JSON.stringify(calls.map((c) => c.draft.toolCallId)) !== JSON.stringify(wanted)) problems.push('tool/call entries differ from the answer\'s tool calls');
  const results = draftsOf(run, 'tool/result');
  for (const c of calls) {
    const n = results.filter((r) => r.draft.callId === c.draft.callId).length;
    if (n > 1 || (run.done && n !== 1)) problems.push(`I2/I5: ${c.draft.callId} has ${n} results on a path that is ${run.done ? '' : 'not '}final`);
  }
  // Every retry is one the request-error listeners asked for, and no other.
  const asked = run.sent.filter((e) => e.type === 'xstate.done.actor.recover' && (e.output as { kind: string }).kind === 'retry').length;
  if (countKind(run, 'model/retry') !== asked) problems.push(`${countKind(run, 'model/retry')} retries logged for ${asked} the listeners asked for`);
  const cancelled = run.sent.some((e) => e.type === 'step.cancel.requested');
  const unsaved = run.sent.some((e) => e.type.startsWith('xstate.done.actor.t') && (e.output as { unsaved?: string }).unsaved !== undefined);
  const end = draftsOf(run, 'step/end')[0];
  if (cancelled && end && end.at > run.sent.findIndex((e) => e.type === 'step.cancel.requested') && end.draft.reason !== 'aborted') {
    problems.push(`a cancelled step ended ${end.draft.reason}`);
  }
  if (unsaved && !cancelled && run.done) {
    const out = run.final.output as { reason: string; code?: string; cause?: string };
    if (out.reason !== 'error' || out.code !== 'LOG_NOT_DURABLE' || out.cause !== 'EIO') problems.push(`a call could not be saved, but the step ended ${out.reason} ${out.code ?? ''}`);
    if (end?.draft.reason !== 'error') problems.push(`a call could not be saved, but step/end says ${end?.draft.reason}`);
  }
  // The request is built once, right after step/start and before any event: its header can only land inside the step.
  const prepares = run.effects.filter((e) => e.action === 'prepareRequest');
  if (prepares.length !== 1 || prepares[0]!.at !== 0 || prepares[0]!.afterDrafts !== 1) {
    problems.push(`prepareRequest ran ${prepares.length} times, not once right after step/start`);
  }
  checkOrder(run, problems);
  checkProjection(run, problems);
  return problems;
}

export const stepModel: PathModel = {
  generator: 'shortest',
  input: { turn: 't1', step: 't1.s1' },
  inputs: [
    { name: 'resumed', input: { turn: 't1', step: 't1.s2', resume: { blocks: RESUMED_BLOCKS, finish: { kind: 'ok', reason: 'tool-calls' }, settled: RESUMED_SETTLED } } },
    // Its open call answered in the log (a crash before the dispatch, a fork's new answer): handed that answer.
    {
      name: 'resumed, answered',
      input: { turn: 't1', step: 't1.s2', resume: { blocks: RESUMED_BLOCKS, finish: { kind: 'ok', reason: 'tool-calls' }, settled: RESUMED_SETTLED, answered: { 't1.s2.c2': { outcome: 'allowed-once', by: 'fork' } } } },
    },
  ],
  // The request-error listeners' every answer: another attempt, compaction first, or giving up.
  outputs: { recoverRequest: [{ kind: 'retry', delayMs: 1 }, { kind: 'compact' }, { kind: 'give-up' }] },
  payloads: {
    'step.request.prepared': [{ type: 'step.request.prepared', request: { model: 'm', system: 'be brief', tools: [], messages: [] } }],
    'step.request.failed': [{ type: 'step.request.failed', error: 'the header source threw' }],
  },
  events,
  abstract,
  beforeSend,
  check,
};
